"""Spanning-tree sampling time per tree vs n: vectorised cycle popping vs sequential Wilson.

``uv run python packages/graphs/benchmarks/sampling.py [--quick] [--out runs/bench/fgl-sampling.json]``

Graphs: random graphs with ``n`` nodes and ``5n`` random edges (average degree ≈ 10, like FGL's
kNN-augmented graphs) with uniform random weights in ``[0.1, 1.1]``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import time_and_memory  # noqa: E402

from iclr26_graphs.ops import sample_spanning_forests  # noqa: E402
from iclr26_graphs.ops.spanning_tree import Sampler  # noqa: E402
from iclr26_shared.bench import bench_main  # noqa: E402


def _row(n: int) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(n)
    ei = torch.stack([torch.arange(n).repeat_interleave(5), torch.randint(0, n, (5 * n,), generator=gen)])
    w = torch.rand(5 * n, generator=gen) + 0.1
    row: dict[str, Any] = {"n": n}
    samplers: tuple[tuple[Sampler, int], ...] = (("cycle-popping", 1), ("wilson", 1))
    for sampler, trees in samplers:
        res = time_and_memory(
            lambda s=sampler, t=trees: sample_spanning_forests(
                ei, w, n, t, torch.Generator().manual_seed(0), sampler=s
            ),
            repeats=1,
        )
        if "median_s" in res:
            res["seconds_per_tree"] = res["median_s"] / trees
        res["trees_per_call"] = trees
        row[sampler] = res
    return row


def run(quick: bool) -> dict[str, Any]:
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    out: dict[str, Any] = {"rows": []}
    for n in sizes:
        row = _row(n)
        print(n, row, flush=True)
        out["rows"].append(row)
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("fgl-sampling", run))
