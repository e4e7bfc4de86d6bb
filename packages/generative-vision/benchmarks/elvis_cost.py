"""Cost of the re-rankers per image pair: ELViS vs Chamfer+OT vs the transformer re-ranker vs descriptor count.

``uv run python packages/generative-vision/benchmarks/elvis_cost.py [--quick] [--out PATH]``

For N ∈ {100, 200, …, 700} descriptors per image (``--quick``: 100 and 200) and a batch of B pairs of random
unit descriptors (B = 8 on CPU, so that the full run stays within a few minutes on two cores; 32 on a GPU):
median µs per pair of one no-grad forward of ELViS (D = 128 SIFT width and D = 768 DINOv2 width), of the
zero-parameter Chamfer+OT, and of the RRT-style transformer (the paper's RRT size: 6 layers, width 256,
4 heads; ``--quick``: 2 layers, width 128), their parameter counts and the speed-up of ELViS over the
transformer measured in the same process (``iclr26_shared.bench.compare``);
peak memory of one ELViS forward through ``peak_memory``. The paper's numbers (µs per pair on a GPU;
ELViS 96K parameters / 101 µs, RRT 2232K / 656 µs, Chamfer+OT 0 / 98) are the reference.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from iclr26_generative_vision.retrieval.elvis import ELViS, chamfer_ot_similarity
from iclr26_generative_vision.retrieval.rrt import RerankingTransformer
from iclr26_shared.bench import bench_main, compare, measure, peak_memory


def _pairs(batch: int, n: int, dim: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(0)
    q = F.normalize(torch.randn(batch, n, dim, generator=gen), dim=-1).to(device)
    x = F.normalize(torch.randn(batch, n, dim, generator=gen), dim=-1).to(device)
    mask = torch.ones(batch, n, dtype=torch.bool, device=device)
    return q, mask, x, mask


def run(quick: bool) -> dict[str, Any]:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    counts = (100, 200) if quick else (100, 200, 300, 400, 500, 600, 700)
    batch = 8 if quick or device.type == "cpu" else 32
    repeats = 3 if quick else 5
    layers, width = (2, 128) if quick else (6, 256)
    torch.manual_seed(0)
    models = {
        "elvis_d128": ELViS(128).to(device).eval(),
        "elvis_d768": ELViS(768).to(device).eval(),
    }
    rrt = RerankingTransformer(128, dim=width, layers=layers, heads=4, ffn=2 * width).to(device).eval()
    out: dict[str, Any] = {
        "device": str(device),
        "pairs_per_call": batch,
        "params": {
            "elvis_d128": models["elvis_d128"].num_inference_parameters(),
            "elvis_d768": models["elvis_d768"].num_inference_parameters(),
            "chamfer_ot": 0,
            f"rrt_{layers}x{width}": rrt.num_inference_parameters(),
        },
        "by_descriptors": {},
    }
    for n in counts:
        q, m, x, xm = _pairs(batch, n, 128, device)
        q7, _, x7, _ = _pairs(batch, n, 768, device)
        with torch.no_grad():
            row: dict[str, Any] = {
                "elvis_d128_vs_rrt": compare(
                    lambda q=q, m=m, x=x, xm=xm: models["elvis_d128"](q, m, x, xm),
                    lambda q=q, m=m, x=x, xm=xm: rrt(q, m, x, xm, q[:, 0], x[:, 0]),
                    repeats=repeats,
                ),
                "elvis_d768": measure(
                    lambda q7=q7, m=m, x7=x7, xm=xm: models["elvis_d768"](q7, m, x7, xm), repeats=repeats
                ),
                "chamfer_ot": measure(lambda q=q, m=m, x=x, xm=xm: chamfer_ot_similarity(q, m, x, xm), repeats=repeats),
            }
            mem = peak_memory(lambda q=q, m=m, x=x, xm=xm: models["elvis_d128"](q, m, x, xm), device=str(device))
        row["us_per_pair"] = {
            "elvis_d128": row["elvis_d128_vs_rrt"]["fast"]["median_s"] / batch * 1e6,
            "rrt": row["elvis_d128_vs_rrt"]["baseline"]["median_s"] / batch * 1e6,
            "elvis_d768": row["elvis_d768"]["median_s"] / batch * 1e6,
            "chamfer_ot": row["chamfer_ot"]["median_s"] / batch * 1e6,
        }
        row["elvis_peak_memory"] = mem.to_dict()
        out["by_descriptors"][str(n)] = row
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("elvis_cost", run))
