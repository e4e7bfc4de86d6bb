"""Parity with the official DEQL code (coderaBruce/DEQL, commit 9028c88, MIT).

The official repository does not run as published (it imports its own ``world`` config module at import
time), so its three per-column closed-form solvers (``models/model.py``: ``EDLAE_b_geq_0``,
``EDLAE_b_geq_0_L2const``, ``EDLAE_b_geq_0_diag0_L2const``) and its metrics (``utils/eval_helper.py``:
``Recall_at_k_batch``, ``NDCG_binary_at_k_batch``) are re-derived here line by line from that code, fed
the Gram matrix cast to float32 as it does (``RTR = np.asarray(..., dtype=np.float32)``), and compared with
ours: :func:`deql_weights_rank1`, :func:`deql_weights_structured`, :class:`GramFactorization` and the
estimator's ``B_``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from iclr26_recsys import DEQL, GramFactorization
from iclr26_recsys.metrics import evaluate
from iclr26_recsys.ops.closed_forms import deql_weights_rank1, deql_weights_structured


def official_deql(R: sp.csr_matrix, p: float, a: float, b: float, l2: float, diag0: bool) -> np.ndarray:
    """The official solvers: ``EDLAE_b_geq_0`` (l2 = 0), ``..._L2const`` (l2 > 0) and ``..._diag0_L2const``."""
    RTR = np.asarray(R.T.dot(R).todense(), dtype=np.float32)
    a2, b2 = a**2, b**2
    G0 = ((1 - p) ** 2 * p * a2 + (1 - p) ** 3 * b2) * np.ones(RTR.shape)
    np.fill_diagonal(G0, (1 - p) * p * a2 + (1 - p) ** 2 * b2)
    H0 = G0 * RTR
    np.fill_diagonal(H0, np.diag(H0) + l2)  # EDLAE_b_geq_0 has no L2 term: l2 = 0 there
    H0_inv = np.linalg.inv(H0)
    B = np.zeros(RTR.shape)
    V = ((1 - p) * p * a2 + (1 - p) ** 2 * b2) * np.ones(RTR.shape)
    np.fill_diagonal(V, (1 - p) * b2)
    V = V * RTR
    E1 = ((1 - p) ** 2 * p * (b2 - a2)) * np.ones(RTR.shape)
    np.fill_diagonal(E1, (1 - p) * p * (b2 - a2))
    E1 = E1 * RTR
    E2 = E1.copy()
    np.fill_diagonal(E2, 0)
    S1, S2 = H0_inv @ V, H0_inv @ E1
    for i in range(RTR.shape[1]):
        s1, s2 = S1[:, i], S2[:, i]
        s = s1 - 1 / (1 + s2[i]) * s1[i] * s2
        t = H0_inv[:, i] - H0_inv[i, i] / (1 + s2[i]) * s2
        B[:, i] = s - 1 / (1 + E2[:, i] @ t) * (E2[i, :] @ s) * t
        if diag0:
            sl = H0_inv[:, i]
            s_corr = sl - 1 / (1 + s2[i]) * sl[i] * s2
            corr_term = s_corr - 1 / (1 + E2[:, i] @ t) * (E2[i, :] @ s_corr) * t
            corr_term *= B[i, i] / corr_term[i]
            B[:, i] = B[:, i] - corr_term
    return B


def official_ndcg(X_pred: np.ndarray, heldout: sp.csr_matrix, k: int) -> np.ndarray:
    users = X_pred.shape[0]
    idx_topk_part = np.argpartition(-X_pred, k, axis=1)  # bottleneck's argpartition in the official code
    topk_part = X_pred[np.arange(users)[:, None], idx_topk_part[:, :k]]
    idx_part = np.argsort(-topk_part, axis=1)
    idx_topk = idx_topk_part[np.arange(users)[:, None], idx_part]
    tp = 1.0 / np.log2(np.arange(2, k + 2))
    DCG = (heldout[np.arange(users)[:, None], idx_topk].toarray() * tp).sum(axis=1)
    IDCG = np.array([(tp[: min(n, k)]).sum() for n in heldout.getnnz(axis=1)])
    return DCG / IDCG


def official_recall(X_pred: np.ndarray, heldout: sp.csr_matrix, k: int) -> np.ndarray:
    users = X_pred.shape[0]
    idx = np.argpartition(-X_pred, k, axis=1)
    X_pred_binary = np.zeros_like(X_pred, dtype=bool)
    X_pred_binary[np.arange(users)[:, None], idx[:, :k]] = True
    X_true_binary = heldout.toarray() > 0  # the official (heldout_batch > 0).toarray()
    tmp = (np.logical_and(X_true_binary, X_pred_binary).sum(axis=1)).astype(np.float32)
    return tmp / np.minimum(k, X_true_binary.sum(axis=1))  # the strong-generalisation branch


def _binary(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    R = (rng.random((m, n)) < density).astype(np.float64)
    R[rng.integers(0, m, size=n), np.arange(n)] = 1.0  # every item seen once, so G is invertible at l2 = 0
    return sp.csr_matrix(R)


R = _binary(80, 20, 0.25, seed=57)
G32 = torch.from_numpy(np.asarray((R.T @ R).todense(), dtype=np.float32).astype(np.float64))


@pytest.mark.parametrize("zero_diag", [False, True])
@pytest.mark.parametrize("l2", [0.0, 7.0])
@pytest.mark.parametrize("p", [0.1, 0.33, 0.8])
@pytest.mark.parametrize("b", [0.1, 0.5, 0.9])
def test_weights_equal_the_official_solvers(b, p, l2, zero_diag):
    ref = official_deql(R, p, 1.0, b, l2, zero_diag)
    fac = GramFactorization(G32, p)
    ours = {
        "rank1": deql_weights_rank1(G32, p, 1.0, b, l2, zero_diag=zero_diag).numpy(),
        "structured": deql_weights_structured(G32, p, 1.0, b, l2, zero_diag=zero_diag).numpy(),
        "factorised": fac.weights(fac.deql_form(1.0, b, l2, zero_diag=zero_diag)).numpy(),
        "estimator": DEQL(p, 1.0, b=b, l2=l2, zero_diag=zero_diag).fit(R).B_,
    }
    scale = np.abs(ref).max()
    for name, W in ours.items():
        err = np.abs(W - ref).max() / scale
        assert err < 1e-9, f"{name}: max |W − official| / max |official| = {err:.2e}"
    if zero_diag:
        assert np.abs(np.diag(ref)).max() < 1e-12 * scale


def test_metrics_equal_the_official_eval_helper():
    rng = np.random.default_rng(7)
    train = _binary(300, 150, 0.08, seed=1)
    test = (rng.random((60, 150)) < 0.12).astype(np.float64)
    test[:, 0] = 1.0  # every test user has items
    hold = test * (rng.random(test.shape) < 0.2)
    hold[np.arange(60), rng.integers(1, 150, 60)] = 1.0  # and held-out items
    fold_in = np.where(hold > 0, 0.0, test)
    model = DEQL(0.25, b=0.5, l2=7.0).fit(train)
    pred = fold_in.astype(np.float32) @ model.B_  # official: X.astype('float32') @ B
    ours = evaluate(pred, fold_in, hold)
    pred_val = pred.copy()
    pred_val[fold_in.nonzero()] = -np.inf
    held = sp.csr_matrix(hold)
    official = {
        "recall@20": official_recall(pred_val, held, 20).mean(),
        "recall@50": official_recall(pred_val, held, 50).mean(),
        "ndcg@20": official_ndcg(pred_val, held, 20).mean(),
        "ndcg@100": official_ndcg(pred_val, held, 100).mean(),
    }
    assert set(ours) == set(official)
    for key, value in official.items():
        assert ours[key] == pytest.approx(value, rel=1e-6), key
    assert 0.05 < official["recall@20"] < 1.0  # a real ranking, not a degenerate one
