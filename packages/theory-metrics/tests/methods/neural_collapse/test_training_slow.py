"""Slow: on real digits, SGD's weight decay drives NC0 down while SignumW's drives it up (the paper's effect)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from iclr26_shared.images import load_image_tensors
from iclr26_theory_metrics.methods.neural_collapse.config import BEST_NC3, PRESETS, RunSpec
from iclr26_theory_metrics.methods.neural_collapse.train import train_one


@pytest.mark.slow
def test_sgd_shrinks_nc0_and_signumw_inflates_it() -> None:
    cfg = dataclasses.replace(PRESETS["quick"], model="mlp", width=8, epochs=30, batch_size=32)
    data = load_image_tensors("digits", scale="standardize")
    out = {
        name: train_one(RunSpec(name, *BEST_NC3[name]), data, cfg, device=torch.device("cpu"), seed=0)
        for name in ("sgd", "signumw")
    }
    for r in out.values():
        assert r["final"]["train_acc"] > 0.9, r["final"]
    assert out["sgd"]["final"]["nc0"] < 0.3 * out["sgd"]["init"]["nc0"]
    assert out["signumw"]["final"]["nc0"] > out["signumw"]["init"]["nc0"]
    assert out["sgd"]["final"]["nc0"] < 0.1 * out["signumw"]["final"]["nc0"]
