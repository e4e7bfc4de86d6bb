"""causal-delta under ``torchrun`` (gloo, CPU): two processes follow the single-process loss curve of the
vanilla pair classifier (CE over equal shards averages to the global CE) and write one run directory; rank
0 renders the pool and rank 1 reads it from the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iclr26_shared.testing import run_single_and_torchrun

ARGS = ["causal-delta", "--preset", "smoke", "--device", "cpu", "--quiet", "--variants", "vanilla", "cde"]
ARGS += ["--splits", "comp", "--epochs", "2", "--log-every", "1"]


def _run_dir(root: Path) -> Path:
    (path,) = (p for p in (root / "causal-delta").iterdir() if not p.name.startswith("."))  # exactly one
    return path


def _losses(root: Path) -> list[float]:
    rows = [json.loads(line) for line in (_run_dir(root) / "metrics.jsonl").read_text().splitlines()]
    return [r["comp/vanilla/loss"] for r in rows if "comp/vanilla/loss" in r]


@pytest.mark.slow  # three processes that each import torch and render the pool
def test_torchrun_two_processes_match_one(tmp_path: Path) -> None:
    one, two = run_single_and_torchrun("iclr26_generative_vision", ARGS, tmp_path)  # rank 0 alone reports
    a, b = _losses(one), _losses(two)
    assert len(a) == len(b) > 0
    assert b == pytest.approx(a, rel=1e-4, abs=1e-5)
    results = json.loads((_run_dir(two) / "results.json").read_text())
    assert results["world_size"] == 2 and not results["pool"]["from_cache"]
