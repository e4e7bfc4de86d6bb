"""Config validation names the field; presets are valid; the grid expands as documented."""

from __future__ import annotations

import dataclasses

import pytest

from iclr26_shared.errors import ConfigError
from iclr26_theory_metrics.methods.neural_collapse.config import BEST_NC3, PRESETS, NeuralCollapseConfig
from iclr26_theory_metrics.methods.neural_collapse.grid import RunSpec, expand_grid


def test_presets_are_valid() -> None:
    assert set(PRESETS) >= {"smoke", "quick", "full"}
    for cfg in PRESETS.values():
        assert isinstance(cfg, NeuralCollapseConfig) and expand_grid(cfg)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"optimizers": "sgd,lion"}, "optimizers"),
        ({"optimizers": "sgd,sgd"}, "optimizers"),
        ({"optimizers": ""}, "optimizers"),
        ({"lrs": "0.1,abc"}, "lrs"),
        ({"lrs": "0"}, "lrs"),
        ({"momenta": "1.0"}, "momenta"),
        ({"weight_decays": "-1"}, "weight_decays"),
        ({"epochs": 0}, "epochs"),
        ({"n_train": 5}, "n_train"),
        ({"model": "vit"}, "model"),
        ({"dataset": "svhn"}, "dataset"),
        ({"valid_accuracy": 1.5}, "valid_accuracy"),
        ({"ufm_dim": 4}, "ufm_dim"),
        ({"ufm_classes": 2}, "ufm_classes"),
        ({"ufm_sgd_lr": 10.0, "ufm_sgd_wd": 0.5}, "ufm_sgd_wd"),
        ({"train": False, "ufm": False}, "train"),
    ],
)
def test_bad_values_name_their_field(changes: dict, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        dataclasses.replace(NeuralCollapseConfig(), **changes)
    assert err.value.field == field


def test_grid_best_sweep_paper_and_overrides() -> None:
    best = expand_grid(NeuralCollapseConfig(grid="best"))
    assert [r.optimizer for r in best] == ["sgd", "sgdw", "adam", "adamw", "signum", "signumw", "sgd"]
    assert best[0] == RunSpec("sgd", *BEST_NC3["sgd"])
    assert best[-1] == RunSpec("sgd", 0.01, 0.0, 0.05, role="ablation")
    sweep = expand_grid(NeuralCollapseConfig(grid="sweep", momentum_ablation=False))
    assert len(sweep) == 12 and {r.weight_decay for r in sweep if r.optimizer == "adamw"} == {5.0, 0.5}
    paper = expand_grid(NeuralCollapseConfig(grid="paper", optimizers="adamw", momentum_ablation=False))
    assert len(paper) == 108 and max(r.weight_decay for r in paper) == 10.0
    custom = expand_grid(
        NeuralCollapseConfig(optimizers="signum", lrs="0.1,0.2", weight_decays="0", momentum_ablation=True)
    )
    assert [(r.lr, r.momentum, r.weight_decay) for r in custom] == [(0.1, 0.9, 0.0), (0.2, 0.9, 0.0)]
    assert custom[0].label == "signum lr=0.1 m=0.9 wd=0"
