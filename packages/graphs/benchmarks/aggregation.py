"""Tree aggregation: the two-pass aggregator (Theorem 1) vs the dense all-pairs twin, time and memory vs n.

``uv run python packages/graphs/benchmarks/aggregation.py [--quick] [--out runs/bench/fgl-aggregation.json]``

Trees are uniform random labelled trees (Prüfer), features ``[n, 16]`` float32, one forward pass.
The dense twin is skipped where its ``n × n`` buffers would exceed ``DENSE_BUDGET_GB``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import random_tree, time_and_memory  # noqa: E402

from iclr26_graphs.nn import TreeAggregator, naive_tree_aggregate  # noqa: E402
from iclr26_graphs.ops import build_tree_schedule  # noqa: E402
from iclr26_shared.bench import bench_main  # noqa: E402

DIM = 16
DENSE_BUDGET_GB = 0.5


def _row(n: int, agg: TreeAggregator) -> dict[str, Any]:
    tree = random_tree(n, seed=n)
    x = torch.randn(n, DIM)
    w = torch.rand(n - 1)
    schedule = build_tree_schedule(tree, n)
    row: dict[str, Any] = {"n": n, "depth": schedule.depth}
    with torch.no_grad():
        row["two_pass"] = time_and_memory(lambda: agg(x, tree, w, schedule=schedule), repeats=3)
        row["two_pass_with_rooting"] = time_and_memory(lambda: agg(x, tree, w), repeats=1)
        need_gb = n * n * (4 * 4 + 3) / 2**30  # F, A·F, frontier, reach (float32) and boolean n×n buffers
        if need_gb <= DENSE_BUDGET_GB:
            row["dense"] = time_and_memory(
                lambda: naive_tree_aggregate(x, tree, agg.lin_a.weight, agg.lin_b.weight, w), repeats=1
            )
            if "median_s" in row["dense"] and "median_s" in row["two_pass"]:
                row["dense_over_two_pass"] = row["dense"]["median_s"] / row["two_pass"]["median_s"]
        else:
            row["dense"] = {"skipped": f"needs about {need_gb:.1f} GB of n x n buffers"}
    return row


def run(quick: bool) -> dict[str, Any]:
    sizes = [1_000, 3_000, 10_000] if quick else [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000]
    torch.manual_seed(0)
    agg = TreeAggregator(DIM, DIM)
    out: dict[str, Any] = {"dim": DIM, "dense_budget_gb": DENSE_BUDGET_GB, "rows": []}
    for n in sizes:
        row = _row(n, agg)
        print(n, row, flush=True)
        out["rows"].append(row)
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("fgl-aggregation", run))
