"""Throughput of causal-delta on this machine: pairs/s rendered (MuJoCo) and pairs/s trained, CDE vs ResPair.

``uv run python packages/generative-vision/benchmarks/causal_delta_cost.py [--quick] [--out PATH]``

(1) Rendering: before/after pairs per second of ``render_pairs`` (one offscreen MuJoCo context, shadows
off; one call timed by ``iclr26_shared.bench.measure`` after a 2-pair warm-up) at S ∈ {32, 64} pixels
(``--quick``: 32, a few pairs); (2) training: pairs per second of one AdamW step
of CDE model A (CE + SupCon + L1), CDE model B (patch-wise Top-K) and the ResPair baseline on a batch of
128 pairs (``--quick``: 32) at the quick preset's image size and CNN, measured in the same process
(``iclr26_shared.bench.compare``: CDE vs ResPair); peak memory of one CDE step through ``peak_memory``.
Headline numbers are to be measured on an idle machine.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from iclr26_generative_vision.data.causal_triplet import render_pairs
from iclr26_generative_vision.methods.causal_delta.config import PRESETS
from iclr26_generative_vision.methods.causal_delta.model import build_model, loss_terms, to_tensor
from iclr26_shared.bench import bench_main, compare, measure, peak_memory


def run(quick: bool) -> dict[str, Any]:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    sizes = (32,) if quick else (32, 64)
    n_render = 8 if quick else 200
    out: dict[str, Any] = {"device": str(device), "render": {}, "train": {}}
    for s in sizes:
        render_pairs(2, size=s, seed=0)  # warm-up: context creation and model compilation
        timing = measure(lambda s=s: render_pairs(n_render, size=s, seed=1), repeats=1, warmup=0)
        dt = timing["median_s"]
        out["render"][str(s)] = {"pairs": n_render, "seconds": dt, "pairs_per_s": n_render / dt, "timing": timing}
    cfg = dataclasses.replace(PRESETS["quick"], variants=("vanilla", "cde", "cde-patch"))
    batch = 32 if quick else 128
    images, verbs, nouns = render_pairs(batch, size=cfg.image_size, seed=2)
    x0, x1 = to_tensor(images, device)
    v, o = torch.from_numpy(verbs).to(device), torch.from_numpy(nouns).to(device)
    steps = {}
    for variant in ("vanilla", "cde", "cde-patch"):
        torch.manual_seed(0)
        model = build_model(cfg, variant).to(device).train()
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)

        def step(model: torch.nn.Module = model, opt: torch.optim.Optimizer = opt, variant: str = variant) -> None:
            loss = loss_terms(cfg, variant, model(x0, x1), v, o)["loss"]
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        steps[variant] = step
    repeats = 2 if quick else 5
    cmp = compare(steps["cde"], steps["vanilla"], repeats=repeats)
    patch = measure(steps["cde-patch"], repeats=repeats)
    out["train"] = {
        "image_size": cfg.image_size,
        "batch_pairs": batch,
        "cde_vs_respair": cmp,
        "pairs_per_s": {
            "cde": batch / cmp["fast"]["median_s"],
            "respair": batch / cmp["baseline"]["median_s"],
            "cde-patch": batch / patch["median_s"],
        },
        "cde_peak_memory": peak_memory(steps["cde"], device=str(device)).to_dict(),
    }
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("causal_delta_cost", run))
