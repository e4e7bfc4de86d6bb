"""Benchmark: D_LR (Nam et al., ICLR 2026) time and peak memory vs number of inputs n and feature dimension p (CPU).

Fast: :func:`richness` (streaming centred second moments in chunks of 1,024 rows, O(p² + pC + C²) memory).
Baseline: :func:`naive_richness` (the centred n × n kernels and their CKA, O(n²) memory). Both in float64, same
process; peak memory of one call each through :func:`iclr26_shared.bench.peak_memory`.

    uv run python packages/theory-metrics/benchmarks/richness.py [--quick] [--out runs/bench/richness.json]
"""

from __future__ import annotations

from typing import Any

import torch

from iclr26_shared.bench import bench_main, compare, measure, peak_memory
from iclr26_theory_metrics.ops.richness import naive_richness, richness


def _problem(n: int, p: int, c: int = 10, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    f = torch.randn(n, c, generator=gen)
    return torch.randn(n, p, generator=gen) + f @ torch.randn(c, p, generator=gen), f


def _case(n: int, p: int, repeats: int) -> dict[str, Any]:
    phi, f = _problem(n, p)

    def fast() -> float:
        return richness(phi, f, chunk_size=1024)

    def naive() -> float:
        return naive_richness(phi, f)

    if n > 8000:  # the n × n kernels would need several GB; time the streaming path alone
        return {"fast": measure(fast, repeats=repeats), "memory_fast": peak_memory(fast).to_dict()}
    res = compare(fast, naive, repeats=repeats)
    res["memory_fast"], res["memory_naive"] = peak_memory(fast).to_dict(), peak_memory(naive).to_dict()
    res["abs_diff"] = abs(fast() - naive())
    return res


def run(quick: bool) -> dict[str, Any]:
    sizes = [(500, 64), (2000, 64), (2000, 512)] if quick else [(1000, 64), (4000, 64), (4000, 512), (50000, 512)]
    return {f"n{n}_p{p}": _case(n, p, 3 if quick else 5) for n, p in sizes}


if __name__ == "__main__":
    torch.set_num_threads(1)
    raise SystemExit(bench_main("richness", run))
