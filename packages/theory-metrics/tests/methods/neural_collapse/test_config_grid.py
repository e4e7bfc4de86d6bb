"""Config validation names the field; presets are valid; the grid expands as documented."""

from __future__ import annotations

import dataclasses

import pytest

from iclr26_shared.errors import ConfigError
from iclr26_theory_metrics.methods.neural_collapse.config import (
    BEST_NC3,
    PRESETS,
    NeuralCollapseConfig,
    RunSpec,
    expand_grid,
)


def test_presets_are_valid() -> None:
    assert set(PRESETS) >= {"smoke", "quick", "full"}
    for cfg in PRESETS.values():
        assert isinstance(cfg, NeuralCollapseConfig) and expand_grid(cfg)


@pytest.mark.parametrize(
    ("changes", "field", "expected"),
    [
        ({"optimizers": ("sgd", "lion")}, "optimizers[1]", "one of 'sgd'"),
        ({"optimizers": ("sgd", "sgd")}, "optimizers", "at most once"),
        ({"optimizers": ()}, "optimizers", "at least one"),
        ({"optimizers": "sgd,adamw"}, "optimizers", "not a comma string"),
        ({"lrs": (0.1, 0.0)}, "lrs[1]", "> 0"),
        ({"momenta": (1.0,)}, "momenta[0]", "< 1"),
        ({"weight_decays": (-1.0,)}, "weight_decays[0]", ">= 0"),
        ({"epochs": 0}, "epochs", "> 0"),
        ({"n_train": 5}, "n_train", "one image per class"),
        ({"model": "vit"}, "model", "one of"),
        ({"dataset": "svhn"}, "dataset", "one of"),
        ({"valid_accuracy": 1.5}, "valid_accuracy", "<= 1"),
        ({"ufm_dim": 4}, "ufm_dim", "at least ufm_classes"),
        ({"ufm_classes": 2}, "ufm_classes", ">= 3"),
        ({"ufm_sgd_lr": 10.0, "ufm_sgd_wd": 0.5}, "ufm_sgd_wd", "< 2"),
        ({"train": False, "ufm": False}, "train", "nothing to run"),
    ],
)
def test_bad_values_name_their_field(changes: dict, field: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected) as err:
        dataclasses.replace(NeuralCollapseConfig(), **changes)
    assert err.value.field == field


def test_grid_best_sweep_paper_and_overrides() -> None:
    best = expand_grid(NeuralCollapseConfig(grid="best"))
    assert [r.optimizer for r in best] == ["sgd", "sgdw", "adam", "adamw", "signum", "signumw", "sgd"]
    assert best[0] == RunSpec("sgd", *BEST_NC3["sgd"])
    assert best[-1] == RunSpec("sgd", 0.01 / (1 - 0.9), 0.0, 0.05, role="ablation-matched")  # effective step η/(1−β)
    both = expand_grid(NeuralCollapseConfig(grid="best", optimizers=("sgd",), momentum_ablation="both"))
    assert [(r.lr, r.momentum, r.role) for r in both[1:]] == [
        (0.01 / (1 - 0.9), 0.0, "ablation-matched"),
        (0.01, 0.0, "ablation"),
    ]
    sweep = expand_grid(NeuralCollapseConfig(grid="sweep", momentum_ablation="off"))
    assert len(sweep) == 12 and {r.weight_decay for r in sweep if r.optimizer == "adamw"} == {5.0, 0.5}
    paper = expand_grid(NeuralCollapseConfig(grid="paper", optimizers=("adamw",), momentum_ablation="off"))
    assert len(paper) == 108 and max(r.weight_decay for r in paper) == 10.0
    custom = expand_grid(
        NeuralCollapseConfig(optimizers=("signum",), lrs=(0.1, 0.2), weight_decays=(0.0,), momentum_ablation="both")
    )
    assert [(r.lr, r.momentum, r.weight_decay) for r in custom] == [(0.1, 0.9, 0.0), (0.2, 0.9, 0.0)]
    assert custom[0].label == "signum lr=0.1 m=0.9 wd=0"
