"""DiT training resumes from its last checkpoint bit for bit."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from iclr26_generative_vision.methods.s2_guidance.config import PRESETS
from iclr26_generative_vision.methods.s2_guidance.images import load_images, train_dit
from iclr26_shared.runs import RunDir


def test_train_dit_resume_is_bit_identical(tmp_path: Path) -> None:
    cfg = dataclasses.replace(
        PRESETS["smoke"], dit_hidden=16, dit_depth=2, batch_size=8, train_steps=20, checkpoint_every=10
    )
    data = load_images(dataclasses.replace(cfg, max_train=60), seed=0)
    torch.manual_seed(0)  # the initial weights come from the global RNG (seeded by the runner in real runs)
    straight = train_dit(cfg, data, RunDir.create(tmp_path / "a", "s2-guidance", cfg, quiet=True))
    run = RunDir.create(tmp_path / "b", "s2-guidance", cfg, quiet=True)
    torch.manual_seed(0)
    train_dit(cfg, data, run)
    assert [s for s, _ in run.checkpoints()] == [10, 20]
    run.checkpoints()[-1][1].unlink()  # as if killed between step 10 and 20
    torch.manual_seed(1)  # a different init must not matter: the checkpoint restores everything
    resumed = train_dit(cfg, data, run)
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
