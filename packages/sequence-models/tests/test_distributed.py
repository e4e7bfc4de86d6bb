"""torchrun/DDP path of the trainer: the sharded loss reproduces the global batch's gradient, and a
two-process gloo run trains to the single-process loss curve."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from iclr26_sequence_models.data.mqar import IGNORE_INDEX
from iclr26_sequence_models.methods.selective_rope.train import sharded_loss


@pytest.mark.parametrize("world", [2, 4])
def test_sharded_loss_averages_to_the_global_gradient(world: int) -> None:
    """Masked labels spread unevenly over the shards (as in copying/MQAR): the mean of the ranks'
    gradients (what DDP applies) equals the gradient of the global mean cross-entropy."""
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(6, 5, dtype=torch.float64, generator=gen, requires_grad=True)
    x = torch.randn(8, 7, 6, dtype=torch.float64, generator=gen)
    y = torch.randint(0, 5, (8, 7), generator=gen)
    y[:3, :5] = IGNORE_INDEX  # the first rows hold far fewer labels
    (ref,) = torch.autograd.grad(F.cross_entropy((x @ w).reshape(-1, 5), y.reshape(-1), ignore_index=IGNORE_INDEX), w)
    n = int((y != IGNORE_INDEX).sum())
    grads = [torch.autograd.grad(sharded_loss(x[r::world] @ w, y[r::world], n, world), w)[0] for r in range(world)]
    torch.testing.assert_close(torch.stack(grads).mean(0), ref, rtol=1e-5, atol=1e-7)  # logits go through fp32
    naive = [  # per-rank mean losses weight the shards wrongly when their label counts differ
        torch.autograd.grad(
            F.cross_entropy((x[r::world] @ w).reshape(-1, 5), y[r::world].reshape(-1), ignore_index=IGNORE_INDEX), w
        )[0]
        for r in range(world)
    ]
    assert not torch.allclose(torch.stack(naive).mean(0), ref)


def _losses(run_root: Path) -> list[float]:
    (path,) = (run_root / "selective-rope").iterdir()
    rows = [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
    return [r["train_loss"] for r in rows]


@pytest.mark.slow
def test_torchrun_two_processes_match_one(tmp_path: Path) -> None:
    """``torchrun --nproc-per-node 2`` (gloo, CPU) follows the single-process loss curve on copying."""
    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not on PATH")
    args = ["selective-rope", "--preset", "smoke", "--task", "copy", "--no-compare", "--position", "rope"]
    args += ["--device", "cpu", "--quiet", "--copy.steps", "8"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    one = subprocess.run(
        [sys.executable, "-m", "iclr26_sequence_models", *args, "--out-dir", str(tmp_path / "one")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert one.returncode == 0, one.stderr
    two = subprocess.run(
        [torchrun, "--nproc-per-node", "2", "-m", "iclr26_sequence_models", *args, "--out-dir", str(tmp_path / "two")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert two.returncode == 0, two.stderr[-2000:]
    a, b = _losses(tmp_path / "one"), _losses(tmp_path / "two")
    assert len(a) == len(b) > 0
    assert max(abs(u - v) for u, v in zip(a, b, strict=True)) < 1e-4, (a, b)
