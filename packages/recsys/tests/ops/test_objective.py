"""The DEQL objective: moment form = exact enumeration ≈ Monte Carlo; autograd minimisation = closed forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26_recsys.ops.closed_forms import deql_coefficients, deql_weights_rank1, ease_weights, edlae_weights
from iclr26_recsys.ops.objective import (
    deql_objective,
    deql_objective_enumerated,
    deql_objective_monte_carlo,
    minimize_deql_objective,
)


def assert_close(actual, expected, *, rtol: float = 1e-7, atol: float = 1e-9, msg: str = "") -> None:
    """float64 comparison through NumPy (``torch.testing`` imports ``torch._dynamo``: seconds per session)."""
    np.testing.assert_allclose(
        actual.detach().double().numpy(), expected.detach().double().numpy(), rtol, atol, err_msg=msg
    )


@pytest.fixture
def tiny() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(3)
    R = (torch.rand(7, 5, generator=gen, dtype=torch.float64) < 0.5) * torch.randint(1, 4, (7, 5), generator=gen)
    W = torch.randn(5, 5, generator=gen, dtype=torch.float64)
    return R.to(torch.float64), W


@pytest.mark.parametrize(("p", "a", "b", "l2"), [(0.3, 1.0, 0.6, 0.5), (0.7, 0.4, 2.0, 0.0), (0.0, 1.0, 1.0, 1.0)])
def test_moment_form_equals_enumeration(tiny, p, a, b, l2):
    R, W = tiny
    assert_close(deql_objective(R, W, p, a, b, l2), deql_objective_enumerated(R, W, p, a, b, l2))


def test_monte_carlo_agrees(tiny):
    R, W = tiny
    exact = float(deql_objective(R, W, 0.3, 1.0, 0.6))
    mc = float(
        deql_objective_monte_carlo(R, W, 0.3, 1.0, 0.6, samples=4000, generator=torch.Generator().manual_seed(0))
    )
    assert abs(mc - exact) / exact < 0.02
    other = float(deql_objective(R, W, 0.3, 1.0, 1.5))
    assert abs(other - exact) / exact > 0.1  # the check can tell a different emphasis b apart


def test_closed_form_is_stationary_point_of_objective(small_X):
    R = torch.from_numpy(small_X.toarray())
    W = deql_weights_rank1(R.T @ R, 0.3, 1.0, 1.4, 2.0).requires_grad_(True)
    (grad,) = torch.autograd.grad(deql_objective(R, W, 0.3, 1.0, 1.4, 2.0), W)
    assert grad.abs().max() < 1e-8
    W_off = (W.detach() + 1e-3).requires_grad_(True)
    (grad_off,) = torch.autograd.grad(deql_objective(R, W_off, 0.3, 1.0, 1.4, 2.0), W_off)
    assert grad_off.abs().max() > 1e-4


@pytest.mark.parametrize(
    ("method", "zero_diag", "b"), [("gd", False, 1.4), ("nesterov", True, 0.5), ("nesterov", False, 2.5)]
)
def test_gradient_descent_finds_deql_closed_form(small_X, method, zero_diag, b):
    R = torch.from_numpy(small_X.toarray())
    W_star = deql_weights_rank1(R.T @ R, 0.3, 1.0, b, 2.0, zero_diag=zero_diag)
    res = minimize_deql_objective(R, 0.3, 1.0, b, 2.0, zero_diag=zero_diag, method=method, steps=20000)
    assert float((res.W - W_star).norm() / W_star.norm()) < 1e-5
    if zero_diag:
        assert torch.diagonal(res.W).abs().max() == 0


def test_gradient_descent_finds_edlae_and_ease(small_X):
    R = torch.from_numpy(small_X.toarray())
    G = R.T @ R
    p, lam = 0.4, 3.0
    c = deql_coefficients(p, 1.0, 0.0).h_off
    res = minimize_deql_objective(R, p, 1.0, 0.0, c * lam, zero_diag=True, method="nesterov", steps=20000)
    assert_close(res.W, edlae_weights(G, p, lam) / (1 - p), rtol=0, atol=1e-6)
    # EASE: p = 0, b = 1 gives ‖R − RW‖² + λ‖W‖² with diag(W) = 0
    res = minimize_deql_objective(R, 0.0, 1.0, 1.0, lam, zero_diag=True, method="nesterov", steps=20000)
    assert_close(res.W, ease_weights(G, lam), rtol=0, atol=1e-6)


def test_bad_inputs(tiny):
    R, W = tiny
    with pytest.raises(ValueError, match="R must be"):
        deql_objective(R, W[:3], 0.3, 1.0, 1.0)
    with pytest.raises(ValueError, match="p = 1"):
        deql_objective(R, W, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="n <= 12"):
        deql_objective_enumerated(
            torch.zeros(2, 13, dtype=torch.float64), torch.zeros(13, 13, dtype=torch.float64), 0.1, 1, 1
        )
    with pytest.raises(ValueError, match="method"):
        minimize_deql_objective(R, 0.3, 1.0, 1.0, method="adam")  # type: ignore[arg-type]
