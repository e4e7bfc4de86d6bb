"""``HsicUnlearningConfig``: presets validate, bad fields raise ``ConfigError`` naming them, and the CLI turns bad
flags and data-dependent sizes into one line with exit code 2."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import run_cli
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS, UNLEARNING_METHODS, HsicUnlearningConfig


def test_presets_and_defaults() -> None:
    assert set(PRESETS) == {"smoke", "quick", "full"}
    quick = PRESETS["quick"]
    assert quick.dataset == "mnist-5k" and quick.n_shuffles == 200 and quick.subset_size == 400
    assert quick == HsicUnlearningConfig()  # quick is the default
    assert PRESETS["full"].dataset == "fashion-mnist"  # opt-in (Debian package), the paper's scale
    assert quick.unlearning == UNLEARNING_METHODS and quick.max_subset_size == 400


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"unlearning": ("finetune", "finetune")}, "unlearning"),
        ({"f1_subset_sizes": (200, 100)}, "f1_subset_sizes"),
        ({"subset_size": 6}, "subset_size"),
        ({"forget_ratio": 1.0}, "forget_ratio"),
        ({"n_shuffles": 0}, "n_shuffles"),
        ({"jsd_bins": 1}, "jsd_bins"),
        ({"null": "bootstrap"}, "null"),
        ({"null": "gamma", "resplit": True}, "null"),
        ({"null": "gamma", "f1_subset_sizes": (16, 400)}, "null"),
    ],
)
def test_bad_fields_are_named(changes: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(HsicUnlearningConfig(), **changes)


def test_bad_flag_exits_2_with_one_line(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["hsic-unlearning", "--preset", "smoke", "--subset-size", "4", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "subset_size" in res.err and len(res.err.strip().splitlines()) == 1


def test_subsets_larger_than_the_forget_set_exit_2(tmp_path: Path) -> None:
    args = ["hsic-unlearning", "--preset", "smoke", "--subset-size", "500", "--device", "cpu", "--quiet"]
    res = run_cli(cli.main, [*args, "--out-dir", str(tmp_path)])
    assert res.code == 2 and "forget set" in res.err and len(res.err.strip().splitlines()) == 1
