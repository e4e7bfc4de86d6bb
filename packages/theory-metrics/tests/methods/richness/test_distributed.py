"""The grokking trainer under ``torchrun``: two processes (gloo, CPU) with an uneven split of the training set
follow the single-process curve (the full-batch gradient is the same)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _rows(run_root: Path) -> list[dict[str, float]]:
    (path,) = (run_root / "richness").iterdir()
    rows = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
    return [r for r in rows if r["phase"] == "grokking"]


@pytest.mark.slow
def test_torchrun_two_processes_match_one(tmp_path: Path) -> None:
    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not on PATH")
    # 0.455 of 121 pairs = 55 training pairs: an uneven split over 2 ranks
    args = ["richness", "--preset", "smoke", "--no-lazy-rich", "--grok-steps", "20", "--eval-every", "10"]
    args += ["--train-fraction", "0.455", "--device", "cpu", "--quiet"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    one = subprocess.run(
        [sys.executable, "-m", "iclr26_theory_metrics", *args, "--out-dir", str(tmp_path / "one")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert one.returncode == 0, one.stderr[-2000:]
    two = subprocess.run(
        [torchrun, "--nproc-per-node", "2", "-m", "iclr26_theory_metrics", *args, "--out-dir", str(tmp_path / "two")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert two.returncode == 0, two.stderr[-2000:]
    a, b = _rows(tmp_path / "one"), _rows(tmp_path / "two")
    assert [r["step"] for r in a] == [r["step"] for r in b] == [0, 10, 20]
    assert max(abs(u["train_loss"] - v["train_loss"]) for u, v in zip(a, b, strict=True)) < 1e-4, (a, b)
    assert a[-1]["train_loss"] < a[0]["train_loss"]  # it trained
