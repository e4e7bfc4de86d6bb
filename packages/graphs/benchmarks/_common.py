"""Helpers shared by the graphs benchmarks: random trees, and time plus peak memory of one call."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from iclr26_shared.bench import peak_memory


def random_tree(n: int, seed: int) -> torch.Tensor:
    """A uniform random labelled tree (= a uniform spanning tree of K_n) by Prüfer decoding: ``[2, n-1]``."""
    rng = np.random.default_rng(seed)
    if n == 1:
        return torch.empty(2, 0, dtype=torch.long)
    if n == 2:
        return torch.tensor([[0], [1]])
    seq = rng.integers(0, n, n - 2)
    degree = np.ones(n, dtype=np.int64)
    np.add.at(degree, seq, 1)
    leaves = [int(v) for v in np.nonzero(degree == 1)[0]]
    heapq.heapify(leaves)
    src, dst = [], []
    for v in seq.tolist():
        leaf = heapq.heappop(leaves)
        src.append(leaf)
        dst.append(v)
        degree[v] -= 1
        if degree[v] == 1:
            heapq.heappush(leaves, v)
    a, b = heapq.heappop(leaves), heapq.heappop(leaves)
    src.append(a)
    dst.append(b)
    return torch.tensor([src, dst], dtype=torch.long)


def time_and_memory(fn: Callable[[], Any], repeats: int = 3) -> dict[str, Any]:
    """Run ``fn`` ``repeats`` times in this process (one thread); median and min wall time, and the largest
    extra peak memory of a call (``iclr26_shared.bench.peak_memory``: CPU RSS, CUDA peak when on CUDA)."""
    torch.set_num_threads(1)
    try:
        runs = [peak_memory(fn) for _ in range(repeats)]
    except Exception as err:  # a size that fails is reported in its row, the other sizes still run
        return {"error": f"{type(err).__name__}: {err}"}
    times = [r.seconds for r in runs]
    return {
        "median_s": float(np.median(times)),
        "min_s": min(times),
        "peak_extra_mb": max(r.cpu_peak_bytes for r in runs) / 2**20,
    }
