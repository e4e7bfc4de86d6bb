"""Benchmark: Brain-Semantoks pre-training throughput (samples/s) on CPU, SLConv vs its loop twin.

``uv run python packages/science/benchmarks/brain_semantoks_bench.py [--quick] [--out runs/bench/brain-semantoks.json]``

* ``pretrain_step``: one self-distillation step (two views through student and EMA teacher, L_CLS + L_TTR +
  L_Tok with slice masks, backward, AdamW, EMA update) on random z-scored crops over the 80-ROI AAL2 network
  map; samples/s = batch / median seconds (a sample is one scan seen as two views); peak memory.
* ``mae_step``: the BrainLM-style mask-and-reconstruct baseline's step at the same width and batch, timed in
  the same process (``ratio`` = MAE median / Brain-Semantoks median).
* ``slconv``: :class:`~iclr26_science.fmri.SLConv` (grouped conv1d, the fast path) against
  :func:`~iclr26_science.fmri.naive_slconv` (explicit tap loop, the baseline).

Full sizes: the paper's model (D 768, depth 8, crops of 100 samples in patches of 20), batch 64;
``--quick``: the quick preset's model (D 64, depth 2, crops of 64 in patches of 16), batch 32 (a smoke run).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from iclr26_science.fmri import (
    MaskedAutoencoder,
    SemantoksEncoder,
    SemantoksPretrainer,
    SLConv,
    aal2_network_map,
    ema_update,
    naive_slconv,
    slice_mask,
)
from iclr26_shared.bench import bench_main, compare, measure, peak_memory


def run(quick: bool) -> dict[str, Any]:
    torch.manual_seed(0)
    if quick:
        dim, depth, heads, crop, patch, batch, hidden, proj = 64, 2, 4, 64, 16, 32, 128, 32
    else:
        dim, depth, heads, crop, patch, batch, hidden, proj = 768, 8, 12, 100, 20, 64, 1024, 128
    net = aal2_network_map()
    groups = [g.tolist() for g in net.groups()]
    patches = crop // patch
    out: dict[str, Any] = {"dim": dim, "depth": depth, "crop": crop, "patch": patch, "batch": batch,
                           "rois": net.n_rois, "networks": net.n_networks}  # fmt: skip
    enc = SemantoksEncoder(groups, dim=dim, depth=depth, heads=heads, patch=patch, patches=patches)
    model = SemantoksPretrainer(enc, head_hidden=hidden, proj_dim=proj)
    opt = torch.optim.AdamW(model.student_parameters(), lr=1e-4)
    views = torch.randn(2, batch, net.n_rois, crop)
    rng = np.random.default_rng(0)
    masks = torch.from_numpy(np.stack([slice_mask(batch, net.n_networks, patches, rng) for _ in range(2)]))

    def step() -> None:
        loss, _ = model(views, masks, 0.5)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema_update(model.teacher, model.student, 0.995)
        ema_update(model.teacher_head, model.head, 0.995)

    repeats = 2 if quick else 3
    st = measure(step, repeats=repeats)
    out["pretrain_step"] = {**st, "samples_per_s": batch / st["median_s"], "peak_memory": peak_memory(step).to_dict()}

    mae = MaskedAutoencoder(net.n_rois, dim=dim, depth=depth, heads=heads, patch=patch, patches=patches)
    mopt = torch.optim.AdamW(mae.parameters(), lr=1e-4)
    x = views[0]

    def mae_step() -> None:
        loss = mae(x)
        mopt.zero_grad()
        loss.backward()
        mopt.step()

    ms = measure(mae_step, repeats=repeats)
    out["mae_step"] = {**ms, "samples_per_s": batch / ms["median_s"], "ratio": ms["median_s"] / st["median_s"]}

    layer = SLConv(10, 4)
    xs = torch.randn(8, 10, patch if patch >= 16 else 16)
    with torch.no_grad():
        out["slconv"] = compare(lambda: layer(xs), lambda: naive_slconv(layer, xs), repeats=3)
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("brain-semantoks", run))
