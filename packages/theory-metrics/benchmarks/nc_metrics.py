"""Benchmark: NC metric computation time vs number of samples N and feature dimension p (CPU).

Fast: :func:`neural_collapse_metrics` (one streaming pass in chunks of 1,024 rows with per-class shifts, NC1
through the thin SVD of the centred means). Baseline: :func:`naive_neural_collapse_metrics` (per-sample outer
products, the pseudo-inverse of the p × p matrix Σ_B, explicit cosine loops). Both in float64, same process;
peak memory of one call each through :func:`iclr26_shared.bench.peak_memory`.

    uv run python packages/theory-metrics/benchmarks/nc_metrics.py [--quick] [--out runs/bench/nc_metrics.json]
"""

from __future__ import annotations

from typing import Any

import torch

from iclr26_shared.bench import bench_main, compare, measure, peak_memory
from iclr26_theory_metrics.ops.neural_collapse import naive_neural_collapse_metrics, neural_collapse_metrics


def _problem(n: int, p: int, k: int = 10, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    y = torch.arange(k).repeat(n // k)
    h = torch.randn(n, p, generator=gen) + 3.0 * torch.randn(k, p, generator=gen)[y]
    return h, y, torch.randn(k, p, generator=gen)


def _case(n: int, p: int, repeats: int) -> dict[str, Any]:
    h, y, w = _problem(n, p)

    def fast() -> dict[str, float]:
        return neural_collapse_metrics(h, y, w, chunk_size=1024)

    def naive() -> dict[str, float]:
        return naive_neural_collapse_metrics(h, y, w)

    if n > 10000:  # the naive per-sample loop is too slow here; time the fast path alone
        return {"fast": measure(fast, repeats=repeats), "memory_fast": peak_memory(fast).to_dict()}
    res = compare(fast, naive, repeats=repeats)
    res["memory_fast"], res["memory_naive"] = peak_memory(fast).to_dict(), peak_memory(naive).to_dict()
    a, b = fast(), naive()
    res["max_abs_diff"] = max(abs(a[key] - b[key]) for key in a)
    return res


def run(quick: bool) -> dict[str, Any]:
    sizes = [(1000, 64), (4000, 64), (4000, 256)] if quick else [(1000, 64), (10000, 64), (10000, 512), (50000, 512)]
    return {f"N{n}_p{p}": _case(n, p, 3 if quick else 5) for n, p in sizes}


if __name__ == "__main__":
    torch.set_num_threads(1)
    raise SystemExit(bench_main("nc_metrics", run))
