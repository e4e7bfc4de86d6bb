"""The ω sweep reuses the CFG and S² runs for ω = 0 and ω = s2_scale: fresh runs must give the same samples."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from iclr26_generative_vision.methods.s2_guidance.config import PRESETS
from iclr26_generative_vision.methods.s2_guidance.sampling import guider_settings, run_guider, sweep_reuse
from iclr26_generative_vision.nn.resmlp import ResidualMLPDenoiser


@pytest.mark.parametrize("formulation", ["eq4", "appendix"])
def test_reused_sweep_points_equal_fresh_s2_runs(formulation: str) -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], num_inference_steps=10, formulation=formulation)  # pyright: ignore[reportArgumentType]
    torch.manual_seed(0)
    model = ResidualMLPDenoiser(2, 4, hidden=16, depth=6).eval()
    labels = torch.arange(4).repeat_interleave(8)
    noise = torch.randn(32, 2, generator=torch.Generator().manual_seed(1))
    settings = guider_settings(cfg, 3.0, seed=5)
    ran = {name: run_guider(name, model, 6, settings, cfg, noise, labels, 4)[0] for name in ("cfg", "s2")}
    checked = 0
    for omega in (0.0, cfg.s2_scale, 0.7):
        fresh, _ = run_guider("s2", model, 6, dataclasses.replace(settings, s2_scale=omega), cfg, noise, labels, 4)
        source = sweep_reuse(omega, cfg, ran)
        if source is None:  # a point of its own: it must differ from both (the test can tell runs apart)
            assert not torch.equal(fresh, ran["cfg"]) and not torch.equal(fresh, ran["s2"])
            continue
        assert torch.equal(fresh, ran[source]), (omega, source)
        checked += 1
    assert checked == 2
    assert sweep_reuse(0.0, cfg, {"s2"}) is None and sweep_reuse(cfg.s2_scale, cfg, {"cfg"}) is None
