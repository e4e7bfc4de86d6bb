"""``hsic-unlearning``'s trainer through ``iclr26_shared.distributed``: the ranks' loss shares average to the
single-process step, a launch with more processes than a minibatch has samples is a clear usage error, and (slow)
two torchrun processes (gloo, CPU) follow the single-process curve, write one run directory and resume from it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest
import torch

from iclr26_shared.distributed import DistContext
from iclr26_shared.errors import UsageError
from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS
from iclr26_theory_metrics.methods.hsic_unlearning.model import build_classifier, check_world, train_classifier

CFG = PRESETS["smoke"]


class _RankWithoutGroup(DistContext):
    """One rank of a world, without a process group: no DDP wrapper and no all-reduce (the test averages)."""

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        return model

    def mean(self, metrics: Mapping[str, float]) -> dict[str, float]:
        return dict(metrics)


def _one_step(dist: DistContext | None) -> torch.Tensor:
    """The flat parameters after one SGD step on one minibatch of 11 samples (uneven shares 6/5 over 2 ranks)."""
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(11, 1, 4, 4, generator=g), torch.randint(0, 3, (11,), generator=g)
    torch.manual_seed(0)
    model = build_classifier(CFG, (1, 4, 4), 3)
    train_classifier(
        model, (x, y), epochs=1, lr=0.1, batch_size=11, weight_decay=0.0, gen=torch.Generator().manual_seed(1),
        dist=dist,
    )  # fmt: skip
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_rank_shares_average_to_the_single_process_step() -> None:
    single = _one_step(None)
    ranks = [_one_step(_RankWithoutGroup(rank=r, world_size=2)) for r in (0, 1)]
    # DDP averages the ranks' gradients; after one plain SGD step that is the mean of the ranks' parameters
    assert torch.allclose((ranks[0] + ranks[1]) / 2, single, atol=1e-6)
    assert not torch.allclose(ranks[0], single, atol=1e-4)  # each rank alone sees only its share


def test_more_processes_than_a_minibatch_is_a_usage_error() -> None:
    check_world(42, 8, DistContext(rank=0, world_size=2))  # last batch 2: one sample each
    check_world(41, 8, None)  # one process: anything goes
    with pytest.raises(UsageError, match="batch_size: .*last batch 1 of the 41-image retain set"):
        check_world(41, 8, DistContext(rank=0, world_size=2), "retain set")
    cfg = dataclasses.replace(CFG, batch_size=2)
    x, y = torch.randn(40, 1, 4, 4), torch.arange(40) % 3
    with pytest.raises(UsageError, match="batch_size"):
        train_classifier(
            build_classifier(cfg, (1, 4, 4), 3), (x, y), epochs=1, lr=0.1, batch_size=2, weight_decay=0.0,
            gen=torch.Generator(), dist=DistContext(rank=0, world_size=4),
        )  # fmt: skip


@pytest.mark.slow
def test_torchrun_two_processes_match_one_and_resume(launcher: Any) -> None:  # launcher: conftest.Launcher
    # 600 digits in batches of 31 (retain set 540): every minibatch splits unevenly over 2 ranks
    args = ["hsic-unlearning", "--preset", "smoke", "--epochs", "3", "--batch-size", "31", "--device", "cpu"]
    args += ["--quiet"]
    a, b = launcher.one_vs_two(args)  # asserts one run directory each (rank 0 alone writes)
    train_a = [r for r in a if r["phase"].startswith("train")]
    train_b = [r for r in b if r["phase"].startswith("train")]
    assert [(r["phase"], r["epoch"]) for r in train_a] == [(r["phase"], r["epoch"]) for r in train_b]
    assert len(train_a) == 2 * 3
    launcher.assert_close(train_a, train_b, ["loss"])
    assert train_a[2]["loss"] < train_a[0]["loss"]  # it trained
    evals_a = [r for r in a if r["phase"] == "eval"]
    evals_b = [r for r in b if r["phase"] == "eval"]
    assert [r["model"] for r in evals_a] == [r["model"] for r in evals_b]
    launcher.assert_close(evals_a, evals_b, ["acc_retain", "acc_test"], tol=0.02)

    # --resume under torchrun: the same run directory, the models come from rank 0's checkpoint (no new training)
    run_path = launcher.launch([*args, "--resume"], "two", nproc=2)
    rows = launcher.rows(run_path)
    assert sum(r["phase"].startswith("train") for r in rows) == 2 * 3
    results = json.loads((run_path / "results.json").read_text())
    assert results["models"]["original"]["acc_test"] == evals_b[0]["acc_test"]
