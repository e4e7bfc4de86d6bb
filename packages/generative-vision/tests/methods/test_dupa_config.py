"""Config validation and presets of dupa; bad flags exit 2 with one line naming the field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iclr26_generative_vision import cli
from iclr26_generative_vision.methods.dupa.config import PRESETS, DUPAConfig
from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import run_cli


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"variants": ("ddt", "dual-path")}, "variants"),
        ({"variants": ("ddt", "dupa", "ddt")}, "variants"),
        ({"variants": ("ddt", "dupa", "repa")}, "variants"),
        ({"variants": ()}, "variants"),
        ({"num_paths": 1}, "num_paths"),
        ({"predictor": True, "stop_grad": True}, "stop_grad"),
        ({"projector_mode": "fixed"}, "projector_mode"),
        ({"dupa_weight": 0.0}, "dupa_weight"),
        ({"align_layer": 7}, "align_layer"),
        ({"projector_gain": 0.0}, "projector_gain"),
        ({"hidden": 64, "heads": 3}, "heads"),
        ({"hidden": 24, "heads": 4}, "heads"),  # head size 6: no 2-D RoPE
        ({"cfg_interval": (0.7, 0.2)}, "cfg_interval"),
        ({"cfg_interval": (0.0, 1.5)}, "cfg_interval"),
        ({"refresh_rates": (2, 4)}, "refresh_rates"),
        ({"shared_refresh_rate": 5}, "shared_refresh_rate"),
        ({"shared_refresh_rate": 1}, "shared_refresh_rate"),
        ({"eval_every": 5000}, "eval_every"),
        ({"guidance_scale": 0.5}, "guidance_scale"),
        ({"label_dropout": 1.0}, "label_dropout"),
        ({"resample": "neither"}, "resample"),
        ({"arch": "unet"}, "arch"),
    ],
)
def test_bad_configs_raise_naming_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(DUPAConfig(), **changes)  # type: ignore[arg-type]


def test_presets_are_valid_and_paper_defaults() -> None:
    cfg = DUPAConfig()
    assert (cfg.num_paths, cfg.dupa_weight, cfg.resample, cfg.stop_grad) == (2, 0.5, "both", False)
    assert cfg.aligned_layer == 2  # DDT's REPA proportion: block ⌈8·4/22⌉ of the 4 encoder blocks (DDT-XL: 8 of 22)
    assert cfg.paths("ddt") == 1 and cfg.paths("dupa") == 2 and cfg.images_per_step("ddt-2x-batch") == 128
    assert set(PRESETS) == {"smoke", "quick", "full"}
    DUPAConfig(arch="dit", hidden=24, heads=4)  # the plain backbone has no RoPE constraint


def test_bad_flags_exit_2_with_one_line(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["dupa", "--preset", "smoke", "--dupa-weight", "-1", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "dupa_weight" in res.err
    res = run_cli(cli.main, ["dupa", "--preset", "smoke", "--variants", "ddt", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "variants" in res.err
    assert not (tmp_path / "dupa").exists()  # nothing half-written
