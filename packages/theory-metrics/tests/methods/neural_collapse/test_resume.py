"""A run killed after its first training run resumes with the second, logging every epoch exactly once."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iclr26_shared.runner import CommonFlags, execute
from iclr26_theory_metrics.cli import METHODS
from iclr26_theory_metrics.methods.neural_collapse import train as train_mod
from iclr26_theory_metrics.methods.neural_collapse.config import PRESETS


def test_resume_after_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = METHODS["neural-collapse"]
    cfg = dataclasses.replace(
        PRESETS["smoke"],
        n_train=100,
        n_test=20,
        epochs=2,
        optimizers=("sgd", "adamw"),
        momentum_ablation="off",
        ufm=False,
    )
    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path, quiet=True)
    real = train_mod.train_one

    def crash_on_second(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if kwargs["index"] == 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(train_mod, "train_one", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        execute(spec, cfg, flags)
    monkeypatch.setattr(train_mod, "train_one", real)
    run, results, _ = execute(spec, cfg, dataclasses.replace(flags, resume=True))
    assert run.resumed and [r["optimizer"] for r in results["runs"]] == ["sgd", "adamw"]
    rows = run.read_metrics()
    assert [(r["run"], r["epoch"]) for r in rows] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
