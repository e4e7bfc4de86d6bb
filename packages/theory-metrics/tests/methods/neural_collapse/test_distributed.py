"""The neural-collapse trainer through ``iclr26_shared.distributed``: two torchrun processes (gloo, CPU) with
uneven shares of every minibatch follow the single-process loss curve of the same global batch and write one run
directory; a launch with more processes than a minibatch has samples is a clear usage error."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import torch

from iclr26_shared.distributed import DistContext
from iclr26_shared.errors import UsageError
from iclr26_shared.images import ImageTensors
from iclr26_theory_metrics.methods.neural_collapse.config import PRESETS, expand_grid
from iclr26_theory_metrics.methods.neural_collapse.train import train_one


def _rows(run_root: Path) -> list[dict[str, Any]]:
    (path,) = (run_root / "neural-collapse").iterdir()
    return [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_torchrun_two_processes_match_one(tmp_path: Path) -> None:
    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not on PATH")
    # 300 images in batches of 31: every global batch splits unevenly over 2 ranks (16/15, last 21 -> 11/10)
    args = ["neural-collapse", "--preset", "smoke", "--no-ufm", "--epochs", "2", "--batch-size", "31"]
    args += ["--optimizers", "sgd", "--momentum-ablation", "off", "--device", "cpu", "--quiet"]
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
    assert len(list((tmp_path / "two" / "neural-collapse").iterdir())) == 1  # rank 0 alone writes
    a, b = _rows(tmp_path / "one"), _rows(tmp_path / "two")
    assert [r["epoch"] for r in a] == [r["epoch"] for r in b] == [0, 1, 2]
    assert max(abs(u["train_loss"] - v["train_loss"]) for u, v in zip(a, b, strict=True)) < 1e-4, (a, b)
    assert max(abs(u["nc0"] - v["nc0"]) for u, v in zip(a, b, strict=True)) < 1e-4
    assert a[-1]["train_loss"] < a[0]["train_loss"]  # it trained


def test_more_processes_than_a_minibatch_is_a_usage_error() -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], batch_size=2, epochs=1)
    g = torch.Generator().manual_seed(0)
    x, xt = torch.randn(40, 1, 8, 8, generator=g), torch.randn(20, 1, 8, 8, generator=g)
    data = ImageTensors("fake", x, torch.arange(40) % 4, xt, torch.arange(20) % 4, 4)
    stub = cast(Any, SimpleNamespace(dist=DistContext(rank=0, world_size=4), log=lambda *a, **k: None))
    with pytest.raises(UsageError, match="batch_size"):
        train_one(expand_grid(cfg)[0], data, cfg, device=torch.device("cpu"), seed=0, run_dir=stub)
