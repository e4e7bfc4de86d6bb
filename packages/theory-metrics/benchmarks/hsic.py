"""Benchmark: HSIC + a 200-shuffle permutation test vs subset size (Zhang et al., ICLR 2026 run it on subsets of
400 … 2,000; we go to 4,000), on CPU (or CUDA when present).

* cached vs rebuilt Grams: :func:`hsic_permutation_null` (both Grams built once, one row/column selection of the
  cached L per permutation) against :func:`naive_hsic_permutation_null` (one full :func:`hsic` call per
  permutation, Grams rebuilt): the speed-up is the caching;
* loop vs batched gather over the cached Gram (``loop_vs_gather``; speedup = gather time / loop time): the
  former "vectorised" path, all B permuted Grams gathered in chunks and reduced in one product, against the loop
  that the library now uses (issue 38 measured the gather slower: 6.8–7.9 vs 2.3–3.7 ms per permutation at
  |S| = 500);
* quadratic vs linear time: the biased full-sample HSIC against the block estimator (blocks of 64, linear in n).

Both sides of each pair run in the same process, with their peak memory (:func:`iclr26_shared.bench.peak_memory`).

    uv run python packages/theory-metrics/benchmarks/hsic.py [--quick] [--out runs/bench/hsic.json]
"""

from __future__ import annotations

from typing import Any

import torch

from iclr26_shared.bench import bench_main, compare, peak_memory
from iclr26_theory_metrics.ops.hsic import gram, hsic, hsic_permutation_null, naive_hsic_permutation_null


def _gathered_null(x: torch.Tensor, y: torch.Tensor, shuffles: int) -> torch.Tensor:
    """The batched-gather permutation null over the cached Gram (the path the library used before issue 38)."""
    n = x.shape[0]
    k, l = gram(x.double()), gram(y.double())  # noqa: E741
    kc = k - k.mean(0, keepdim=True) - k.mean(1, keepdim=True) + k.mean()
    perms = torch.rand(shuffles, n, generator=torch.Generator().manual_seed(1), dtype=torch.float64).argsort(-1)
    perms = perms.to(x.device)
    chunk = max(1, (1 << 24) // (n * n))
    out = [(l[p[:, :, None], p[:, None, :]] * kc).sum((-1, -2)) / (n - 1) ** 2 for p in perms.split(chunk)]
    return torch.cat(out)


def _pair(n: int, d: int = 64, seed: int = 0, device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(n, 8, generator=gen)
    x = torch.cat([z, torch.randn(n, d - 8, generator=gen)], 1)
    y = torch.tanh(z @ torch.randn(8, d, generator=gen)) + 0.5 * torch.randn(n, d, generator=gen)
    return x.to(device), y.to(device)


def _case(n: int, shuffles: int, repeats: int, loop: bool, device: str) -> dict[str, Any]:
    x, y = _pair(n, device=device)

    def vectorised() -> Any:
        return hsic_permutation_null(x, y, shuffles, generator=torch.Generator().manual_seed(1))

    def looped() -> Any:
        return naive_hsic_permutation_null(x, y, shuffles, generator=torch.Generator().manual_seed(1))

    out: dict[str, Any] = {"n": n, "shuffles": shuffles}
    out["loop_vs_gather"] = compare(vectorised, lambda: _gathered_null(x, y, shuffles), repeats=repeats)
    if loop:
        out["test_vectorised_vs_loop"] = compare(vectorised, looped, repeats=repeats)
        out["memory_loop"] = peak_memory(looped, device=device).to_dict()
    out["memory_vectorised"] = peak_memory(vectorised, device=device).to_dict()
    out["block_vs_quadratic"] = compare(
        lambda: hsic(x, y, estimator="block", block_size=64), lambda: hsic(x, y), repeats=repeats
    )
    out["block_value"], out["quadratic_unbiased_value"] = (
        float(hsic(x, y, estimator="block", block_size=64)),
        float(hsic(x, y, estimator="unbiased")),
    )
    return out


def run(quick: bool) -> dict[str, Any]:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if quick:
        return {f"n{n}": _case(n, 50, 2, loop=True, device=device) for n in (400, 800)}
    return {f"n{n}": _case(n, 200, 3, loop=n <= 2000, device=device) for n in (400, 1000, 2000, 4000)}


if __name__ == "__main__":
    torch.set_num_threads(1)
    raise SystemExit(bench_main("hsic", run))
