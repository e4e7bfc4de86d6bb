"""Config validation and presets of elvis; bad flags exit 2 with one line naming the field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iclr26_generative_vision import cli
from iclr26_generative_vision.methods.elvis.config import DOMAIN_NAMES, PRESETS, ELViSConfig
from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import run_cli


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"variants": ("rrt",)}, "variants"),
        ({"variants": ("elvis", "elvis")}, "variants"),
        ({"variants": ("elvis", "ames")}, "variants"),
        ({"variants": ()}, "variants"),
        ({"train_domain": "landmarks"}, "train_domain"),
        ({"max_keypoints": 0}, "max_keypoints"),
        ({"train_views": 1}, "train_views"),
        ({"window": 16}, "window"),
        ({"window": 256, "view_size": 64}, "view_size"),
        ({"lam": 1.5}, "lam"),
        ({"tau": 0.0}, "tau"),
        ({"sinkhorn_reg": -0.1}, "sinkhorn_reg"),
        ({"rrt_dim": 30, "rrt_heads": 4}, "rrt_heads"),
        ({"control_auc": 1.5}, "control_auc"),
        ({"weight_decay": -1.0}, "weight_decay"),
    ],
)
def test_bad_configs_raise_naming_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(ELViSConfig(), **changes)  # type: ignore[arg-type]


def test_presets_are_valid_and_paper_defaults() -> None:
    cfg = ELViSConfig()
    assert (cfg.dim, cfg.f_hidden, cfg.g_hidden, cfg.sinkhorn_iters, cfg.sinkhorn_reg) == (128, 16, 64, 10, 0.1)
    assert (cfg.lam, cfg.tau, cfg.lr, cfg.weight_decay, cfg.epochs, cfg.map_k) == (0.5, 0.5, 5e-4, 5e-4, 10, 100)
    assert cfg.held_out_domains == tuple(d for d in DOMAIN_NAMES if d != "natural")
    assert set(PRESETS) == {"smoke", "quick", "full"}


def test_bad_flags_exit_2_with_one_line(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["elvis", "--preset", "smoke", "--lam", "2", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "lam" in res.err
    res = run_cli(cli.main, ["elvis", "--preset", "smoke", "--train-sources", "6", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "train_sources" in res.err
