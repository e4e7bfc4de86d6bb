"""Recall@k and NDCG@k against hand-computed values (Liang et al.'s definitions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from iclr26_recsys.data import InteractionError
from iclr26_recsys.metrics import evaluate, mask_seen, ndcg_at_k, random_ranking_metrics, recall_at_k, top_k

SCORES = np.array([[0.9, 0.8, 0.1, 0.5, 0.3], [0.1, 0.2, 0.3, 0.4, 0.5]])
HELD = np.array([[1, 0, 0, 1, 0], [1, 0, 0, 0, 0]])


def test_top_k_order():
    np.testing.assert_array_equal(top_k(SCORES, 3), [[0, 1, 3], [4, 3, 2]])


def test_recall_hand_computed():
    # user 0: top-2 = {0, 1}, one hit of 2 held out -> 1/min(2, 2); user 1: top-2 = {4, 3}, no hit
    np.testing.assert_allclose(recall_at_k(SCORES, HELD, 2), [0.5, 0.0])
    # k = 1 < |held-out| = 2: denominator is min(k, |I|) = 1
    np.testing.assert_allclose(recall_at_k(SCORES, HELD, 1), [1.0, 0.0])
    # k = 5: user 1's single item is found at rank 5 -> 1/min(5, 1)
    np.testing.assert_allclose(recall_at_k(SCORES, HELD, 5), [1.0, 1.0])


def test_ndcg_hand_computed():
    # user 0, k=3: hits at ranks 1 and 3 -> (1 + 1/log2 4) / (1 + 1/log2 3)
    expected0 = (1 + 1 / 2) / (1 + 1 / math.log2(3))
    # user 1, k=5: hit at rank 5 -> (1/log2 6) / 1
    expected1 = 1 / math.log2(6)
    np.testing.assert_allclose(ndcg_at_k(SCORES, HELD, 3)[0], expected0)
    np.testing.assert_allclose(ndcg_at_k(SCORES, HELD, 5)[1], expected1)
    perfect = np.array([[0.0, 0.0, 0.0, 1.0, 2.0]])
    np.testing.assert_allclose(ndcg_at_k(perfect, [[0, 0, 0, 1, 1]], 2), [1.0])


def test_evaluate_masks_fold_in():
    fold_in = sp.csr_matrix(np.array([[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]]))
    masked = mask_seen(SCORES, fold_in)
    assert masked[0, 0] == -np.inf and masked[1, 4] == -np.inf
    out = evaluate(SCORES, fold_in, np.array([[0, 0, 0, 1, 0], [1, 0, 0, 0, 0]]), recall_ks=(1,), ndcg_ks=(4,))
    # user 0 ranks item 1 then 3: recall@1 = 0; user 1 ranks 3,2,1,0: recall@1 = 0
    assert out["recall@1"] == 0.0
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / 2
    np.testing.assert_allclose(out["ndcg@4"], expected)


def test_metric_errors():
    with pytest.raises(InteractionError, match="larger than the catalogue"):
        recall_at_k(SCORES, HELD, 6)
    with pytest.raises(InteractionError, match="no held-out items"):
        ndcg_at_k(SCORES, np.array([[1, 0, 0, 0, 0], [0, 0, 0, 0, 0]]), 2)
    with pytest.raises(InteractionError, match="shape"):
        recall_at_k(SCORES, HELD[:, :3], 2)
    with pytest.raises(InteractionError, match="NaN"):
        recall_at_k(np.full((2, 5), np.nan), HELD, 2)


def test_random_ranking_metrics_match_monte_carlo():
    """The closed-form no-skill level equals the average metrics of random scores (including k > |candidates|)."""
    rng = np.random.default_rng(0)
    m, n = 40, 120
    fold, hold = np.zeros((m, n)), np.zeros((m, n))
    for u in range(m):
        items = rng.permutation(n)[: rng.integers(10, 70)]
        h = max(1, len(items) // 5)
        hold[u, items[:h]], fold[u, items[h:]] = 1.0, 1.0
    expected = random_ranking_metrics(sp.csr_matrix(fold), sp.csr_matrix(hold))
    draws = [evaluate(rng.random((m, n)), fold, hold) for _ in range(400)]
    for key, value in expected.items():
        assert np.mean([d[key] for d in draws]) == pytest.approx(value, rel=0.03), key
    with pytest.raises(InteractionError, match="no held-out items"):
        random_ranking_metrics(fold, np.zeros((m, n)))
