"""The DiT trainer under ``torchrun`` (gloo, CPU): two processes follow the single-process loss curve with
the same global batch, and exactly one run directory is written (by rank 0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iclr26_shared.testing import run_single_and_torchrun

# a tiny image run: 8 DiT steps logged every step, then the shortest evaluation the config allows
ARGS = [
    "s2-guidance",
    "--preset",
    "smoke",
    "--experiment",
    "images",
    "--device",
    "cpu",
    "--quiet",
    "--train-steps",
    "8",
    "--log-every",
    "1",
    "--batch-size",
    "16",
    "--guiders",
    "cfg",
    "s2",
    "--s2-sweep",
    "--samples-per-class",
    "1",
    "--num-inference-steps",
    "2",
    "--max-train",
    "100",
]


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, check=False)


def _losses(root: Path) -> list[float]:
    (path,) = (root / "s2-guidance").iterdir()  # exactly one run directory
    rows = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
    return [r["dit_loss"] for r in rows if "dit_loss" in r]


@pytest.mark.slow  # three processes that each import torch + diffusers and train: ~45 CPU-seconds
def test_torchrun_two_processes_match_one(tmp_path: Path) -> None:
    one, two = run_single_and_torchrun("iclr26_generative_vision", ARGS, tmp_path)  # rank 0 alone reports
    a, b = _losses(one), _losses(two)
    assert len(a) == len(b) == 8
    assert b == pytest.approx(a, rel=1e-5, abs=1e-6)
    (run_dir,) = (two / "s2-guidance").iterdir()
    assert (run_dir / "results.json").is_file()


def test_torchrun_batch_that_does_not_split_is_a_usage_error(tmp_path: Path) -> None:
    """Fast path through torchrun + the trainer's sharding: a global batch of 15 over 2 ranks is refused."""
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2"]
    args = [a if a != "16" else "15" for a in ARGS]
    res = _run([*launcher, "-m", "iclr26_generative_vision", *args, "--out-dir", str(tmp_path)])
    assert res.returncode != 0
    assert "cannot be split evenly over 2 processes" in res.stderr
