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


# --- the methods at their papers' strengths (issue 38): the defaults of the quick preset on a memorised problem ---
SPAN = dataclasses.replace(PRESETS["quick"], width=8, batch_size=32)


@pytest.fixture(scope="module")
def memorised() -> dict[str, object]:
    """240 Gaussian images with random labels of 3 classes, memorised (train accuracy 1): nothing generalises, so
    forgetting shows as forget accuracy at chance (1/3) and retained knowledge as retain accuracy near 1."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(240, 1, 4, 4, generator=g)
    y = torch.randint(0, 3, (240,), generator=g)
    torch.manual_seed(0)
    model = build_classifier(SPAN, (1, 4, 4), 3)
    train_classifier(model, (x, y), epochs=60, lr=0.05, batch_size=32, weight_decay=0.0, gen=g)
    return {"model": model, "retain": (x[40:], y[40:]), "forget": (x[:40], y[:40]), "unseen": torch.rand(40) + 1.0}


def _run(problem: dict[str, object], method: str, cfg: object = SPAN) -> tuple[float, float, float]:
    """(forget accuracy, retain accuracy, mean forget loss) after ``method``."""
    out = unlearn(
        method, problem["model"], problem["retain"], problem["forget"], cfg,  # type: ignore[arg-type]
        gen=torch.Generator().manual_seed(1), num_classes=3, unseen_losses=problem["unseen"],  # type: ignore[arg-type]
    )  # fmt: skip
    (xf, yf), (xr, yr) = problem["forget"], problem["retain"]  # type: ignore[misc]
    with torch.no_grad():
        fa = float((out(xf).argmax(1) == yf).double().mean())
        ra = float((out(xr).argmax(1) == yr).double().mean())
    return fa, ra, float(per_sample_loss(out, (xf, yf), 100).mean())


def test_memorised_fixture_is_memorised(memorised: dict[str, object]) -> None:
    model, (xf, yf), (xr, yr) = memorised["model"], memorised["forget"], memorised["retain"]  # type: ignore[misc]
    with torch.no_grad():
        assert float((model(xf).argmax(1) == yf).double().mean()) == 1.0  # type: ignore[operator]
        assert float((model(xr).argmax(1) == yr).double().mean()) == 1.0  # type: ignore[operator]


def test_gradient_ascent_at_the_papers_lr_does_nothing_and_at_ours_forgets(memorised: dict[str, object]) -> None:
    """Jia et al.'s GA learning rate 1e-4 leaves a memorised model's forget set untouched (its loss ≈ 0, so the
    gradient ≈ 0: the issue's "ga_lr 1e-4 does nothing"); the default ``ga_lr`` drives forget accuracy to chance."""
    original = per_sample_loss(memorised["model"], memorised["forget"], 100).mean()  # type: ignore[arg-type]
    fa, _, loss = _run(memorised, "grad-ascent", dataclasses.replace(SPAN, ga_lr=1e-4))
    assert fa == 1.0 and abs(loss - float(original)) < 0.01 * float(original) + 1e-4
    fa, _, loss = _run(memorised, "grad-ascent")
    assert fa < 0.5 and loss > 10 * float(original)


@pytest.mark.parametrize("method", ["random-labels", "salun"])
def test_relabelling_forgets_and_keeps_the_retain_set(memorised: dict[str, object], method: str) -> None:
    """Random labels and SalUn at the papers' schedule (a forget pass, then a whole retain pass per epoch) forget
    (forget accuracy near chance 1/3) and keep retain accuracy (the pre-issue-38 schedule paired each forget batch
    with one retain batch and wrecked it on the quick preset: 0.61-0.75)."""
    fa, ra, _ = _run(memorised, method)
    assert fa < 0.5 and ra >= 0.95


def test_weak_methods_stay_near_the_original(memorised: dict[str, object]) -> None:
    """The weak end of the span: fine-tuning on D_retain (whose loss is ≈ 0) leaves the memorised forget set
    classified; the ordering of the forget losses is fine-tune < random labels < gradient ascent."""
    ft, rl, ga = (_run(memorised, m) for m in ("finetune", "random-labels", "grad-ascent"))
    assert ft[0] >= 0.95 and ft[1] == 1.0
    assert ft[2] < rl[2] < ga[2]


def test_relabelling_passes_over_the_whole_retain_set(memorised: dict[str, object]) -> None:
    """Every epoch of random labels sees each forget and each retain image once: unlearn_epochs × (|D_f| + |D_r|)
    images go through the model (counted with a forward hook)."""
    seen: list[int] = []
    cfg = dataclasses.replace(SPAN, unlearn_epochs=3)
    model = memorised["model"]
    assert isinstance(model, torch.nn.Module)
    handle = model.register_forward_hook(lambda _m, args, _o: seen.append(int(args[0].shape[0])))
    try:  # the deep copy inside unlearn keeps the hook
        unlearn(
            "random-labels", model, memorised["retain"], memorised["forget"], cfg,  # type: ignore[arg-type]
            gen=torch.Generator().manual_seed(1), num_classes=3,
        )  # fmt: skip
    finally:
        handle.remove()
    assert sum(seen) == 3 * 240
