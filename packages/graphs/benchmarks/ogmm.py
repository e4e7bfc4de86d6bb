"""OGMM cost: stage-1 generation time per graph (per architecture) and stage-2 merge time vs number of experts.

``uv run python packages/graphs/benchmarks/ogmm.py [--quick] [--out runs/bench/graphs-ogmm.json]``

Experts are untrained (random weights: the cost does not depend on them) and read the default data set's
20 node features (``molecules``); generation runs the paper's
200 AdamW epochs on 64 graphs of 20 nodes (``--quick``: 20 epochs, 16 graphs); merging runs 20 epochs
on 64 generated-like random graphs per expert. Times are wall clock in this process, one thread.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import time_and_memory  # noqa: E402

from iclr26_graphs.data.graph_domains import DenseGraphs  # noqa: E402
from iclr26_graphs.data.molecules import ELEMENTS, MAX_DEGREE  # noqa: E402
from iclr26_graphs.methods.ogmm.config import PRESETS  # noqa: E402
from iclr26_graphs.methods.ogmm.model import DenseExpert  # noqa: E402
from iclr26_graphs.methods.ogmm.train import generate, merge  # noqa: E402
from iclr26_shared.bench import bench_main  # noqa: E402


def _random_graphs(num: int, nodes: int, feats: int, seed: int) -> DenseGraphs:
    gen = torch.Generator().manual_seed(seed)
    a = (torch.rand(num, nodes, nodes, generator=gen) < 0.2).float().triu(1)
    return DenseGraphs(
        torch.randn(num, nodes, feats, generator=gen),
        a + a.transpose(1, 2),
        torch.ones(num, nodes, dtype=torch.bool),
        torch.randint(0, 2, (num,), generator=gen),
        torch.zeros(num, dtype=torch.long),
    )


def run(quick: bool) -> dict[str, Any]:
    base = PRESETS["quick"]
    cfg = dataclasses.replace(base, gen_epochs=20 if quick else 200, gen_graphs=16 if quick else 64)
    feats = len(ELEMENTS) + 1 + MAX_DEGREE + 1  # the default data set's node features (molecules: element + degree)
    out: dict[str, Any] = {"generation": [], "merging": []}
    for arch in cfg.archs:
        torch.manual_seed(0)
        expert = DenseExpert(arch, feats, cfg.hidden, 2, cfg.layers).eval()
        res = time_and_memory(lambda e=expert: generate(e, 2, cfg, 0), repeats=1)
        if "median_s" in res:
            res["seconds_per_graph"] = res["median_s"] / cfg.gen_graphs
        row = {"arch": arch, "graphs": cfg.gen_graphs, "epochs": cfg.gen_epochs, **res}
        print(row, flush=True)
        out["generation"].append(row)
    for m in (2, 4) if quick else (2, 4, 6, 8):
        experts = []
        for j in range(m):
            torch.manual_seed(j)
            experts.append((f"gcn-{'A' if j % 2 == 0 else 'B'}", DenseExpert("gcn", feats, cfg.hidden, 2).eval()))
        graphs = _random_graphs((16 if quick else 64) * m, cfg.gen_nodes, feats, m)
        epochs = 2 if quick else cfg.merge_epochs
        mcfg = dataclasses.replace(cfg, merge_epochs=epochs)
        top = min(2, m)
        res = time_and_memory(lambda ex=experts, g=graphs, c=mcfg, k=top: merge(ex, g, c, k, 0), repeats=1)
        row = {"experts": m, "graphs": len(graphs), "epochs": epochs, **res}
        print(row, flush=True)
        out["merging"].append(row)
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("graphs-ogmm", run))
