"""dupa under ``torchrun`` (gloo, CPU): two processes follow the single-process loss curves of every
variant with the same global batch, and exactly one run directory is written (by rank 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iclr26_shared.testing import run_single_and_torchrun

ARGS = ["dupa", "--preset", "smoke", "--device", "cpu", "--quiet", "--train-steps", "6", "--log-every", "1"]
ARGS += ["--eval-every", "6", "--eval-samples-per-class", "1", "--samples-per-class", "1", "--max-train", "100"]
ARGS += ["--num-inference-steps", "2", "--cfg-guidance-scale", "1"]


def _losses(root: Path) -> dict[str, list[float]]:
    (path,) = (root / "dupa").iterdir()  # exactly one run directory
    rows = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("phase") == "train"]
    return {k: [r[k] for r in rows] for k in rows[0] if k.endswith("loss")}


@pytest.mark.slow  # three processes that each import torch + diffusers and train three models
def test_torchrun_two_processes_match_one(tmp_path: Path) -> None:
    one, two = run_single_and_torchrun("iclr26_generative_vision", ARGS, tmp_path)  # rank 0 alone reports
    a, b = _losses(one), _losses(two)
    assert set(a) == set(b) and "dupa/dupa_loss" in a
    for key in a:
        assert len(a[key]) == 6
        assert b[key] == pytest.approx(a[key], rel=1e-4, abs=1e-5), key
    (run_dir,) = (two / "dupa").iterdir()
    assert json.loads((run_dir / "results.json").read_text())["world_size"] == 2
