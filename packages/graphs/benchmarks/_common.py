"""Helpers shared by the graphs benchmarks: random trees and peak-memory measurement in a child process."""

from __future__ import annotations

import heapq
import multiprocessing as mp
import resource
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch


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


def _child(fn: Callable[[], Any], repeats: int, queue: Any) -> None:
    torch.set_num_threads(1)
    try:
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        queue.put({"median_s": float(np.median(times)), "min_s": min(times), "peak_extra_mb": (peak - base) / 1024})
    except Exception as err:  # report, do not hang the parent
        queue.put({"error": f"{type(err).__name__}: {err}"})


def measure_in_child(fn: Callable[[], Any], repeats: int = 3, timeout: float = 600.0) -> dict[str, Any]:
    """Run ``fn`` ``repeats`` times in a forked child; median time and the growth of its peak RSS (MB)."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(fn, repeats, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return {"error": f"timed out after {timeout:.0f} s"}
    return queue.get() if not queue.empty() else {"error": f"child exited with code {proc.exitcode}"}
