"""RichnessConfig: the presets are valid, bounds and cross-field rules raise ConfigError naming the field."""

from __future__ import annotations

import pytest

from iclr26_shared.errors import ConfigError
from iclr26_theory_metrics.methods.richness.config import PRESETS, RichnessConfig


def test_presets_are_valid_and_ordered() -> None:
    assert set(PRESETS) == {"smoke", "quick", "full"}
    assert PRESETS["full"].modulus == 97 and PRESETS["full"].train_fraction == 0.3 and PRESETS["full"].dim == 128
    assert PRESETS["smoke"].grok_steps < PRESETS["quick"].grok_steps < PRESETS["full"].grok_steps
    assert all(p.layers == 2 and p.grok_weight_decay > 0 for p in PRESETS.values())


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"modulus": 2}, "modulus"),
        ({"train_fraction": 1.0}, "train_fraction"),
        ({"train_fraction": 0.0}, "train_fraction"),
        ({"dim": 30, "heads": 4}, "heads"),
        ({"grok_lr": 0.0}, "grok_lr"),
        ({"grok_weight_decay": -1.0}, "grok_weight_decay"),
        ({"grok_steps": 10, "eval_every": 20}, "eval_every"),
        ({"grok_steps": 100, "eval_every": 50, "final_window": 4}, "final_window"),  # 3 evaluations: 0, 50, 100
        ({"final_window": 0}, "final_window"),
        ({"grok_accuracy": 0.0}, "grok_accuracy"),
        ({"dataset": "imagenet"}, "dataset"),
        ({"grokking": False, "lazy_rich": False, "batch_norm_study": False}, "grokking"),
        ({"vgg_lr": 0.0}, "vgg_lr"),
        ({"control_dim": 5, "control_classes": 10}, "control_dim"),
        ({"control_n": 10}, "control_n"),
        ({"image_loss": "ce"}, "stress_target_scales"),
        ({"stress_weight_decays": (0.0,)}, "stress_weight_decays"),
    ],
)
def test_bad_fields_raise_config_error(overrides: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        RichnessConfig(**overrides)  # pyright: ignore[reportArgumentType]  (deliberately bad values)
