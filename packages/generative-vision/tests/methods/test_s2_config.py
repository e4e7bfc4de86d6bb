"""Config validation and presets of s2-guidance."""

from __future__ import annotations

import dataclasses

import pytest

from iclr26_generative_vision.methods.s2_guidance.config import PRESETS, S2GuidanceConfig
from iclr26_shared.config import config_from_dict, config_to_dict
from iclr26_shared.errors import ConfigError


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"guiders": ("cfg", "s2", "magic")}, "guiders"),
        ({"guiders": "cfg,s2"}, "guiders"),
        ({"guiders": ("cfg",)}, "guiders"),
        ({"guiders": ("cfg", "s2", "cfg")}, "guiders"),
        ({"image_guiders": ("cond", "cfg")}, "image_guiders"),
        ({"image_guiders": ("cfg", "s2", "s2")}, "image_guiders"),
        ({"image_guiders": ("cfg", "s2", "magic")}, "image_guiders"),
        ({"image_s2_sweep": (0.0, -1.0)}, "image_s2_sweep"),
        ({"dit_activation": "relu"}, "dit_activation"),
        ({"s2_scale": -0.25}, "s2_scale"),
        ({"s2_sweep": (0.0, -1.0)}, "s2_sweep"),
        ({"drop_ratio": 1.0}, "drop_ratio"),
        ({"s2_start": 0.9, "s2_stop": 0.1}, "s2_stop"),
        ({"gmm_dims": (3,)}, "gmm_dims"),
        ({"gmm_dims": ()}, "gmm_dims"),
        ({"gmm_samples": 1}, "gmm_samples"),
        ({"max_train": -1}, "max_train"),
        ({"ema_decay": 1.0}, "ema_decay"),
        ({"lr": 0.0}, "lr"),
        ({"formulation": "comfyui"}, "formulation"),
        ({"exclude_blocks": tuple(range(10))}, "exclude_blocks"),
        ({"dit_heads": 5}, "dit_heads"),
        ({"naive_n": 0}, "naive_n"),
        ({"image_guidance_scale": 0.5}, "image_guidance_scale"),
        ({"label_dropout": 0.0}, "label_dropout"),
    ],
)
def test_bad_values_name_the_field(changes: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(S2GuidanceConfig(), **changes)


def test_presets_round_trip_and_paper_defaults() -> None:
    assert set(PRESETS) >= {"smoke", "quick", "full"}
    for cfg in PRESETS.values():
        assert config_from_dict(S2GuidanceConfig, config_to_dict(cfg)) == cfg
    q = PRESETS["quick"]
    assert (q.s2_scale, q.drop_ratio, q.s2_start, q.s2_stop, q.exclude_blocks) == (0.25, 0.1, 0.1, 0.9, (0,))
    assert q.formulation == "eq4" and q.guiders[:2] == ("cond", "cfg")
    # the toys keep every guider (their claims need naive S²); quick's DiT leaves out naive S², AutoGuidance
    # and the sweep (no claim reads them), full keeps them
    assert "naive-s2" in q.guiders and q.s2_sweep == (0.0, 0.1, 0.25, 0.5, 1.0)
    assert q.dit_guiders == ("cond", "cfg", "s2", "slg") and "autoguidance" in q.guiders
    assert q.dit_s2_sweep == () and q.dit_activation == "gelu"
    full = PRESETS["full"]
    assert full.dit_guiders == full.guiders and full.dit_s2_sweep == full.s2_sweep
    assert full.dit_activation == "gelu-approximate"  # DiT's tanh GELU
