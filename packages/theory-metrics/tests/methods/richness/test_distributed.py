"""The grokking trainer under ``torchrun``: two processes (gloo, CPU) with an uneven split of the training set
follow the single-process curve (the full-batch gradient is the same)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.slow
def test_torchrun_two_processes_match_one(launcher: Any) -> None:  # launcher: conftest.Launcher
    # 0.455 of 121 pairs = 55 training pairs: an uneven split over 2 ranks
    args = ["richness", "--preset", "smoke", "--no-lazy-rich", "--grok-steps", "20", "--eval-every", "10"]
    args += ["--train-fraction", "0.455", "--device", "cpu", "--quiet"]
    a, b = launcher.one_vs_two(args, keep=lambda r: r["phase"] == "grokking")
    assert [r["step"] for r in a] == [r["step"] for r in b] == [0, 10, 20]
    launcher.assert_close(a, b, ["train_loss"])
    assert a[-1]["train_loss"] < a[0]["train_loss"]  # it trained
