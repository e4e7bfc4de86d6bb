"""Benchmark: D_LR (Nam et al., ICLR 2026) time and peak memory vs number of inputs n and feature dimension p (CPU).

Fast: :func:`richness` (streaming centred second moments in chunks of 1,024 rows, O(p² + pC + C²) memory).
Baseline: :func:`naive_richness` (the centred n × n kernels and their CKA, O(n²) memory). Both in float64, same
process; peak memory of one call each through :func:`iclr26_shared.bench.peak_memory`. The ``scaling`` section
times the streaming path alone over a grid of n (p fixed) and of p (n fixed) and fits the log-log slopes
(expected ≈ 1 in n and ≈ 2 in p for n ≫ p: the cost is the O(np²) Gram accumulation).

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


def _slope(xs: list[int], ys: list[float]) -> float:
    """Least-squares slope of log y on log x."""
    lx, ly = torch.tensor(xs, dtype=torch.float64).log(), torch.tensor(ys, dtype=torch.float64).log()
    lx, ly = lx - lx.mean(), ly - ly.mean()
    return float(lx @ ly / (lx @ lx))


def _scaling(ns: list[int], ps: list[int], n_fixed: int, p_fixed: int, repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for axis, grid in (("n", [(n, p_fixed) for n in ns]), ("p", [(n_fixed, p) for p in ps])):
        times = []
        for n, p in grid:
            phi, f = _problem(n, p)
            times.append(measure(lambda phi=phi, f=f: richness(phi, f, chunk_size=1024), repeats=repeats)["median_s"])
        xs = [n for n, _ in grid] if axis == "n" else [p for _, p in grid]
        out[f"vs_{axis}"] = {"grid": [list(g) for g in grid], "median_s": times, "loglog_slope": _slope(xs, times)}
    return out


def run(quick: bool) -> dict[str, Any]:
    sizes = [(500, 64), (2000, 64), (2000, 512)] if quick else [(1000, 64), (4000, 64), (4000, 512), (50000, 512)]
    res: dict[str, Any] = {f"n{n}_p{p}": _case(n, p, 3 if quick else 5) for n, p in sizes}
    if quick:
        res["scaling"] = _scaling([2000, 8000, 32000], [32, 128, 512], n_fixed=8000, p_fixed=128, repeats=3)
    else:
        res["scaling"] = _scaling(
            [4000, 16000, 64000, 256000], [64, 256, 1024, 2048], n_fixed=16000, p_fixed=256, repeats=5
        )
    return res


if __name__ == "__main__":
    torch.set_num_threads(1)
    raise SystemExit(bench_main("richness", run))
