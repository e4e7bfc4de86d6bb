"""The unlearning methods and the loss attack on a tiny problem: each method changes the model, gradient ascent
raises the forget loss, MIA-fool moves only the head, SalUn's mask keeps its share, the attack is at chance on
identical losses and perfect on separated ones."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS
from iclr26_theory_metrics.methods.hsic_unlearning.model import (
    build_classifier,
    per_sample_loss,
    saliency_mask,
    train_classifier,
    unlearn,
)
from iclr26_theory_metrics.methods.hsic_unlearning.train import loss_attack

CFG = dataclasses.replace(PRESETS["smoke"], unlearn_epochs=2, mia_fool_steps=30, ga_lr=1e-2)


@pytest.fixture(scope="module")
def problem() -> dict[str, object]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(120, 1, 4, 4, generator=g)
    y = torch.randint(0, 3, (120,), generator=g)
    torch.manual_seed(0)
    model = build_classifier(CFG, (1, 4, 4), 3)
    train_classifier(model, (x, y), epochs=30, lr=0.05, batch_size=32, weight_decay=0.0, gen=g)
    return {"model": model, "retain": (x[20:], y[20:]), "forget": (x[:20], y[:20]), "unseen": torch.rand(40) + 1.0}


@pytest.mark.parametrize("method", CFG.unlearning)
def test_every_method_changes_the_model(problem: dict[str, object], method: str) -> None:
    original = problem["model"]
    assert isinstance(original, torch.nn.Module)
    out = unlearn(
        method, original, problem["retain"], problem["forget"], CFG,  # type: ignore[arg-type]
        gen=torch.Generator().manual_seed(1), num_classes=3, unseen_losses=problem["unseen"],  # type: ignore[arg-type]
    )  # fmt: skip
    before = torch.cat([p.detach().flatten() for p in original.parameters()])
    after = torch.cat([p.detach().flatten() for p in out.parameters()])
    assert not torch.equal(before, after)
    if method == "mia-fool":  # only the head moved
        for (name, p), q in zip(original.named_parameters(), out.parameters(), strict=True):
            assert torch.equal(p, q) == (not name.startswith("classifier")), name


def test_gradient_ascent_raises_the_forget_loss(problem: dict[str, object]) -> None:
    original, forget = problem["model"], problem["forget"]
    assert isinstance(original, torch.nn.Module)
    out = unlearn(
        "grad-ascent", original, problem["retain"], forget, CFG,  # type: ignore[arg-type]
        gen=torch.Generator().manual_seed(1), num_classes=3,
    )  # fmt: skip
    assert per_sample_loss(out, forget, 100).mean() > per_sample_loss(original, forget, 100).mean()  # type: ignore[arg-type]


def test_saliency_mask_keeps_its_share(problem: dict[str, object]) -> None:
    model = problem["model"]
    assert isinstance(model, torch.nn.Module)
    mask = saliency_mask(model, problem["forget"], 0.3, 100)  # type: ignore[arg-type]
    flat = torch.cat([m.flatten() for m in mask.values()])
    assert set(mask) == {n for n, _ in model.named_parameters()}
    assert abs(float(flat.mean()) - 0.3) < 0.02


def test_loss_attack_at_chance_and_perfect() -> None:
    g = torch.Generator().manual_seed(0)
    same = [torch.rand(500, generator=g) for _ in range(4)]
    assert abs(loss_attack(*same)["mia_acc"] - 0.5) < 0.06
    members, non = torch.rand(200, generator=g), torch.rand(200, generator=g) + 2.0
    res = loss_attack(members, non, members, non)
    assert res["mia_acc"] == 1.0 and res["mia_member_rate"] == 1.0
