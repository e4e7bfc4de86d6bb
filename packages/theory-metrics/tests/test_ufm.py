"""The UFM simulator against autograd and the closed forms of Theorems 3.1–3.3, and Theorem 3.4's behaviour."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from iclr26_theory_metrics.ufm import (
    empirical_rate,
    etf_class_means,
    random_rotation,
    sgd_alpha_rate,
    sgd_alpha_theory,
    signgd_alpha_bound,
    signgd_decoupled_alpha_theory,
    signgd_decoupled_limit,
    simulate_ufm,
    ufm_alpha,
    ufm_gradients,
)


def test_analytic_gradients_equal_autograd() -> None:
    gen = torch.Generator().manual_seed(0)
    h = torch.randn(12, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    y = torch.arange(4).repeat(3)
    loss = torch.nn.functional.cross_entropy(h @ w.T, y)
    loss.backward()
    value, gw, gh = ufm_gradients(h.detach(), w.detach(), y)
    assert value == pytest.approx(float(loss.detach()), rel=1e-12)
    assert w.grad is not None and h.grad is not None
    assert torch.allclose(gw, w.grad, rtol=1e-10, atol=1e-14) and torch.allclose(gh, h.grad, rtol=1e-10, atol=1e-14)
    assert float(gw.sum(0).abs().max()) < 1e-14


def test_etf_means_and_alpha() -> None:
    m = etf_class_means(4, 6)
    gram = m @ m.T
    assert torch.allclose(gram.diagonal(), torch.ones(4, dtype=torch.float64))
    assert torch.allclose(gram[0, 1], torch.tensor(-1 / 3, dtype=torch.float64))
    assert ufm_alpha(torch.ones(4, 6)) == pytest.approx(16 * 6 / 4)
    with pytest.raises(ValueError, match="p >= K"):
        etf_class_means(5, 3)


@pytest.mark.parametrize(("name", "coupled"), [("sgd", True), ("sgdw", False)])
def test_sgd_alpha_follows_theorems_3_1_and_3_2(name: str, coupled: bool) -> None:
    kw: dict[str, Any] = dict(lr=0.1, momentum=0.9, weight_decay=0.2)
    tr = simulate_ufm(name, num_classes=5, dim=8, n_per_class=3, steps=300, features="free", **kw)
    theory = sgd_alpha_theory(tr.alpha[0], steps=300, coupled=coupled, **kw)
    assert tr.alpha[0] > 0.01
    for sim, th in zip(tr.alpha, theory, strict=True):
        if th > 1e-16 * tr.alpha[0]:
            assert sim == pytest.approx(th, rel=1e-6)
    assert tr.alpha[-1] < 1e-2 * tr.alpha[0]
    assert tr.loss[-1] < tr.loss[0]


def test_sgd_without_wd_keeps_alpha() -> None:
    tr = simulate_ufm("sgd", num_classes=5, dim=8, steps=50, lr=0.5, momentum=0.5, weight_decay=0.0)
    assert max(tr.alpha) == pytest.approx(min(tr.alpha), rel=1e-9)


def test_signgd_decoupled_rises_to_the_limit_of_theorem_3_3() -> None:
    k, lr, wd, steps = 6, 0.02, 0.5, 800
    tr = simulate_ufm("signumw", num_classes=k, steps=steps, lr=lr, weight_decay=wd, features="etf", init_std=0.0)
    theory = signgd_decoupled_alpha_theory(num_classes=k, lr=lr, weight_decay=wd, steps=steps)
    assert tr.alpha[0] == 0.0
    assert all(b >= a for a, b in zip(tr.alpha[:-1], tr.alpha[1:], strict=True))
    for sim, th in zip(tr.alpha[1:], theory[1:], strict=True):
        assert sim == pytest.approx(th, rel=1e-9)
    assert tr.alpha[-1] == pytest.approx(signgd_decoupled_limit(k, wd), rel=1e-2)
    assert signgd_decoupled_limit(k, wd) == pytest.approx(64.0)


def test_signgd_coupled_is_non_monotone_and_vanishes_with_a_decaying_step() -> None:
    kw: dict[str, Any] = dict(num_classes=6, steps=600, lr=0.02, weight_decay=0.5, features="etf", init_std=0.0)
    const = simulate_ufm("signum", **kw)
    decay = simulate_ufm("signum", lr_schedule="inverse", lr_tau=20.0, **kw)
    assert any(b < a for a, b in zip(decay.alpha[:-1], decay.alpha[1:], strict=True))
    assert max(decay.alpha[-60:]) < 1e-3 * max(decay.alpha)
    assert max(const.alpha[-60:]) > 10 * max(decay.alpha[-60:])
    assert decay.lr[-1] == pytest.approx(0.02 / (1 + 599 / 20.0))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown optimizer"):
        simulate_ufm("rmsprop")
    with pytest.raises(ValueError, match="features must be"):
        simulate_ufm("sgd", features="fixed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lr_schedule"):
        simulate_ufm("sgd", lr_schedule="cosine")  # type: ignore[arg-type]


@pytest.mark.parametrize(("coupled", "boundary"), [(False, 2.0), (True, 2.0 * (1 + 0.9))])
def test_alpha_rate_crosses_one_at_the_theorems_conditions(coupled: bool, boundary: float) -> None:
    """Thm 3.1: ρ < 1 iff 0 < ηλ < 2; Thm 3.2: ρ < 1 iff 0 < ηλ < 2(1+β)."""

    def rate(eta_lambda: float) -> float:
        return sgd_alpha_rate(lr=0.1, weight_decay=eta_lambda / 0.1, momentum=0.9, coupled=coupled)

    assert rate(0.99 * boundary) < 1.0 < rate(1.01 * boundary)
    assert rate(boundary) == pytest.approx(1.0)
    assert rate(0.5) < 1.0


def test_generic_start_follows_the_statements_not_just_the_recurrence() -> None:
    """From a random W_0 and free features: the measured per-step factor equals ρ, and at 2 < ηλ < 2(1+β)
    coupled SGD decays while SGDW diverges; beyond 2(1+β) coupled SGD diverges too."""
    kw: dict[str, Any] = dict(num_classes=5, dim=8, n_per_class=3, features="free", momentum=0.9, seed=3)
    tr = simulate_ufm("sgd", steps=400, lr=0.1, weight_decay=0.2, **kw)
    theory = sgd_alpha_rate(lr=0.1, weight_decay=0.2, momentum=0.9, coupled=True)
    assert empirical_rate(tr.alpha, floor=1e-12 * tr.alpha[0]) == pytest.approx(theory, rel=1e-3)
    inside = dict(steps=100, lr=0.1, weight_decay=29.0)  # ηλ = 2.9
    assert simulate_ufm("sgd", **inside, **kw).alpha[-1] < 1e-3 * tr.alpha[0]
    assert simulate_ufm("sgdw", **inside, **kw).alpha[-1] > 1e10 * tr.alpha[0]
    outside = dict(steps=100, lr=0.1, weight_decay=47.5)  # ηλ = 4.75 > 3.8
    assert simulate_ufm("sgd", **outside, **kw).alpha[-1] > 1e10 * tr.alpha[0]


def test_theorem_3_3_limit_is_basis_dependent_but_alpha_does_not_vanish() -> None:
    """On a rotated ETF the sign pattern is no longer that of J − 2I: α_t is not monotone and settles far below
    (K−2)²/λ², yet stays bounded away from 0 and below pK/λ²."""
    k, lr, wd, steps = 10, 0.02, 0.5, 1000
    kw: dict[str, Any] = dict(num_classes=k, steps=steps, lr=lr, weight_decay=wd, features="etf", init_std=0.0)
    axis = simulate_ufm("signumw", **kw)
    rotated = simulate_ufm("signumw", feature_rotation_seed=0, **kw)
    limit = signgd_decoupled_limit(k, wd)
    assert axis.alpha[-1] == pytest.approx(limit, rel=1e-2)
    assert rotated.alpha[-1] < 0.2 * limit
    assert any(b < a for a, b in zip(rotated.alpha[:-1], rotated.alpha[1:], strict=True))
    tail = rotated.alpha[-100:]
    assert min(tail) > 0.5 * max(rotated.alpha) and max(rotated.alpha) <= signgd_alpha_bound(k, k, wd)


def test_random_rotation_is_orthogonal_and_seeded() -> None:
    q = random_rotation(6, seed=1)
    assert torch.allclose(q @ q.T, torch.eye(6, dtype=torch.float64), atol=1e-12)
    assert torch.equal(q, random_rotation(6, seed=1)) and not torch.equal(q, random_rotation(6, seed=2))
    with pytest.raises(ValueError, match="feature_rotation_seed applies to features='etf' only"):
        simulate_ufm("signumw", features="free", feature_rotation_seed=0)
