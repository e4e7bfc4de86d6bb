"""Every named guider builds and samples on a block model; forward-pass counts match their definitions."""

from __future__ import annotations

import pytest
import torch
from diffusers.schedulers.scheduling_ddim import DDIMScheduler

from iclr26_generative_vision.guidance.factory import GUIDER_NAMES, GuiderSettings, make_guider
from iclr26_generative_vision.guidance.sampler import count_forward_passes, guided_sample
from iclr26_generative_vision.methods.s2_guidance import config as s2_config
from iclr26_shared.errors import ConfigError

# 10 steps, S²/SLG interval [0.1, 0.9): S² active at steps 1..8 (8 steps), SLG at steps 2..8 (strict start).
EXPECTED_NFE = {"cond": 10, "cfg": 20, "s2": 28, "naive-s2": 20 + 8 * 3, "slg": 27, "autoguidance": 20}


@pytest.mark.parametrize("name", GUIDER_NAMES)
def test_named_guider_runs(name: str, mlp: torch.nn.Module) -> None:
    settings = GuiderSettings(guidance_scale=2.0, naive_n=3)
    guider = make_guider(name, settings, num_blocks=10)
    assert count_forward_passes(guider, 10) == EXPECTED_NFE[name]
    labels = torch.arange(4)
    noise = torch.randn(4, 2, generator=torch.Generator().manual_seed(0))
    out = guided_sample(
        mlp, DDIMScheduler(clip_sample=False), guider, noise, {"class_labels": (labels, torch.full_like(labels, 4))}, 10
    )
    assert out.shape == noise.shape and torch.isfinite(out).all()


def test_names_agree_with_the_config_and_unknown_names_fail() -> None:
    assert tuple(GUIDER_NAMES) == tuple(s2_config.GUIDER_NAMES)
    with pytest.raises(ConfigError, match="guiders"):
        make_guider("pag", GuiderSettings(), 10)
