"""Closed forms: fast paths against the per-column reference, the paper's invariants, EDLAE/EASE links."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from iclr26_recsys.ops.closed_forms import (
    GramFactorization,
    NotPositiveDefiniteError,
    deql_coefficients,
    deql_weights_rank1,
    deql_weights_structured,
    ease_weights,
    edlae_weights,
    naive_deql_weights,
    naive_ease_weights,
)


def assert_close(actual, expected, *, rtol: float = 1e-7, atol: float = 1e-9, msg: str = "") -> None:
    """float64 comparison through NumPy (``torch.testing`` imports ``torch._dynamo``: seconds per session)."""
    np.testing.assert_allclose(
        actual.detach().double().numpy(), expected.detach().double().numpy(), rtol, atol, err_msg=msg
    )


CASES = [
    (p, a, b, l2, zd)
    for p, a, b, l2, zd in itertools.product(
        [0.0, 0.3, 0.75], [1.0, 0.6], [0.0, 0.4, 1.0, 1.8], [0.0, 7.0], [False, True]
    )
    if not (b == 0.0 and (p == 0.0 or (l2 == 0.0 and not zd)))
]


@pytest.mark.parametrize(("p", "a", "b", "l2", "zero_diag"), CASES)
def test_fast_paths_equal_reference(small_G, p, a, b, l2, zero_diag):
    ref = naive_deql_weights(small_G, p, a, b, l2, zero_diag=zero_diag)
    fac = GramFactorization(small_G, p)
    fast = {
        "rank1": deql_weights_rank1(small_G, p, a, b, l2, zero_diag=zero_diag),
        "structured": deql_weights_structured(small_G, p, a, b, l2, zero_diag=zero_diag),
        "factorised": fac.weights(fac.deql_form(a, b, l2, zero_diag=zero_diag)),
    }
    scale = ref.abs().max()
    for name, W in fast.items():
        assert_close(W / scale, ref / scale, rtol=0, atol=1e-9, msg=name)
    if zero_diag:
        assert torch.diagonal(ref).abs().max() == 0
        assert torch.diagonal(fast["rank1"]).abs().max() < 1e-10


def test_b_positive_gives_nonzero_diagonal(small_G):
    W = deql_weights_rank1(small_G, 0.3, 1.0, 1.0, 0.0)
    assert torch.diagonal(W).abs().min() > 1e-3  # no constraint needed; the diagonal is learned


def test_b_equals_a_is_scaled_dlae(small_G):
    p, lam = 0.4, 5.0
    W = deql_weights_rank1(small_G, p, 1.0, 1.0, 0.0)
    g = torch.diagonal(small_G)
    dlae = torch.linalg.solve(small_G + torch.diag(p / (1 - p) * g), small_G)
    assert_close(W, dlae / (1 - p))
    # the L2 variant: H0 = (1−p)²(G + D) + λI
    W2 = deql_weights_rank1(small_G, p, 1.0, 1.0, lam)
    c = deql_coefficients(p, 1.0, 1.0).h_off
    dlae2 = torch.linalg.solve(small_G + torch.diag(p / (1 - p) * g + lam / c), small_G)
    assert_close(W2, dlae2 / (1 - p))


def test_p_zero_is_ridge_and_ease(small_G):
    b, lam = 1.7, 6.0
    n = small_G.shape[0]
    W = deql_weights_rank1(small_G, 0.0, 1.0, b, lam)
    ridge = torch.linalg.solve(small_G + lam / b**2 * torch.eye(n, dtype=small_G.dtype), small_G)
    assert_close(W, ridge)
    W0 = deql_weights_rank1(small_G, 0.0, 1.0, b, lam, zero_diag=True)
    assert_close(W0, ease_weights(small_G, lam / b**2))


def test_edlae_is_deql_with_b_zero(small_G):
    p, lam = 0.35, 4.0
    c = deql_coefficients(p, 1.0, 0.0).h_off  # (1−p)² p
    W = naive_deql_weights(small_G, p, 1.0, 0.0, c * lam, zero_diag=True)
    assert_close(edlae_weights(small_G, p, lam) / (1 - p), W)
    # b = 0 with L2 and no constraint has W_ii = 0 automatically and equals the constrained solution
    W_free = deql_weights_rank1(small_G, p, 1.0, 0.0, c * lam)
    assert_close(W_free, W, atol=1e-10, rtol=0)


def test_ease_closed_form_and_constraint(small_G):
    W = ease_weights(small_G, 3.0)
    assert torch.diagonal(W).abs().max() == 0
    assert_close(W, naive_ease_weights(small_G, 3.0))


def test_only_ratio_b_over_a_matters_without_l2(small_G):
    assert_close(deql_weights_rank1(small_G, 0.3, 1.0, 1.5, 0.0), deql_weights_rank1(small_G, 0.3, 2.0, 3.0, 0.0))


def test_factorisation_scores_equal_dense_product(small_X, small_G):
    X = torch.from_numpy(small_X.toarray())
    fac = GramFactorization(small_G, 0.25)
    for form in (fac.deql_form(1.0, 1.3, 5.0), fac.edlae_form(2.0)):
        assert_close(fac.scores(X, fac.project(X), form), X @ fac.weights(form))


def test_float32_close_to_float64(small_G):
    W64 = deql_weights_structured(small_G, 0.3, 1.0, 1.2, 3.0)
    W32 = deql_weights_structured(small_G.float(), 0.3, 1.0, 1.2, 3.0)
    assert W32.dtype == torch.float32
    assert_close(W32.double(), W64, rtol=1e-3, atol=1e-4)


def test_invalid_parameters(small_G):
    with pytest.raises(ValueError, match="no unique solution"):
        naive_deql_weights(small_G, 0.3, 1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="zero weight"):
        deql_weights_rank1(small_G, 0.0, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        deql_weights_rank1(small_G, 1.0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="b = -1"):
        deql_weights_structured(small_G, 0.3, 1.0, -1.0, 1.0)
    with pytest.raises(ValueError, match="square"):
        edlae_weights(small_G[:3], 0.2)
    G = small_G.clone()
    G[0, :] = 0
    G[:, 0] = 0
    with pytest.raises(NotPositiveDefiniteError, match="not positive definite"):
        edlae_weights(G, 0.3, 0.0)
    with pytest.raises(NotPositiveDefiniteError):
        GramFactorization(G, 0.3).deql_form(1.0, 1.0, 0.0)


def test_one_factorisation_serves_every_b_and_lambda():
    """The b-sweep's shared ``eigh`` (benchmarks/deql_fit.py, factored sweep): one ``GramFactorization``
    gives every ``(λ, b)`` model exactly, against a fresh rank-1 solve per setting (relative ≤ 1e-8)."""
    rng = np.random.default_rng(3)
    X = (rng.random((300, 60)) < 0.15).astype(np.float64)
    X[rng.integers(0, 300, size=60), np.arange(60)] = 1.0
    G = torch.from_numpy(X.T @ X)
    fac = GramFactorization(G, 0.25)
    for l2, b in itertools.product((0.0, 5.0, 100.0, 1000.0), (0.1, 0.75, 1.75, 2.5)):
        ref = deql_weights_rank1(G, 0.25, 1.0, b, l2)
        W = fac.weights(fac.deql_form(1.0, b, l2))
        rel = float(torch.linalg.norm(W - ref) / torch.linalg.norm(ref))
        assert rel < 1e-8, (l2, b, rel)
