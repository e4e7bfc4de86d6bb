"""The neural-collapse trainer through ``iclr26_shared.distributed``: two torchrun processes (gloo, CPU) with
uneven shares of every minibatch follow the single-process loss curve of the same global batch and write one run
directory; a launch with more processes than a minibatch has samples is a clear usage error."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any, cast

import pytest
import torch

from iclr26_shared.distributed import DistContext
from iclr26_shared.errors import UsageError
from iclr26_shared.images import ImageTensors
from iclr26_theory_metrics.methods.neural_collapse.config import PRESETS, expand_grid
from iclr26_theory_metrics.methods.neural_collapse.train import train_one


@pytest.mark.slow
def test_torchrun_two_processes_match_one(launcher: Any) -> None:  # launcher: conftest.Launcher
    # 300 images in batches of 31: every global batch splits unevenly over 2 ranks (16/15, last 21 -> 11/10)
    args = ["neural-collapse", "--preset", "smoke", "--no-ufm", "--epochs", "2", "--batch-size", "31"]
    args += ["--optimizers", "sgd", "--momentum-ablation", "off", "--device", "cpu", "--quiet"]
    a, b = launcher.one_vs_two(args)  # asserts one run directory each (rank 0 alone writes)
    assert [r["epoch"] for r in a] == [r["epoch"] for r in b] == [0, 1, 2]
    launcher.assert_close(a, b, ["train_loss", "nc0"])
    assert a[-1]["train_loss"] < a[0]["train_loss"]  # it trained


def test_more_processes_than_a_minibatch_is_a_usage_error() -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], batch_size=2, epochs=1)
    g = torch.Generator().manual_seed(0)
    x, xt = torch.randn(40, 1, 8, 8, generator=g), torch.randn(20, 1, 8, 8, generator=g)
    data = ImageTensors("fake", x, torch.arange(40) % 4, xt, torch.arange(20) % 4, 4)
    stub = cast(Any, SimpleNamespace(dist=DistContext(rank=0, world_size=4), log=lambda *a, **k: None))
    with pytest.raises(UsageError, match="batch_size"):
        train_one(expand_grid(cfg)[0], data, cfg, device=torch.device("cpu"), seed=0, run_dir=stub)
