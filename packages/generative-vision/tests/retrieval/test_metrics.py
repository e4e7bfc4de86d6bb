"""Retrieval metrics (AP with junk and cut-off, shortlist re-ranking) and RANSAC spatial verification."""

from __future__ import annotations

import math

import numpy as np

from iclr26_generative_vision.data.retrieval import extract_sift, load_sources
from iclr26_generative_vision.retrieval.metrics import (
    average_precision,
    global_ranking,
    junk_last,
    mean_average_precision,
    rerank_order,
)
from iclr26_generative_vision.retrieval.verification import mutual_nearest_neighbours, ransac_inliers


def _revisitop_ap(order: np.ndarray, ok: np.ndarray, junk: np.ndarray, k: int) -> float:
    """The official ``compute_map`` for one query, written as its loops: cut at k, positions of positives and
    junk in the cut ranking, each positive's position lowered by the junk before it, trapezoids."""
    ranks = order[:k] if k else order
    pos = [i for i, d in enumerate(ranks) if ok[d]]
    jnk = [i for i, d in enumerate(ranks) if junk[d]]
    shifted = [p - sum(1 for j in jnk if j < p) for p in pos]
    nres = min(int(ok.sum()), len(ranks))
    ap = 0.0
    for j, r in enumerate(shifted):
        p0 = 1.0 if r == 0 else j / r
        ap += (p0 + (j + 1) / (r + 1)) / (2 * nres)
    return ap


def test_average_precision_by_hand_with_junk_and_cutoff() -> None:
    positive = np.array([True, False, True, False, False])
    order = np.array([0, 1, 2, 3, 4])  # hits at ranks 1 and 3
    assert math.isclose(average_precision(order, positive, ap="rectangular"), (1 + 2 / 3) / 2)
    assert math.isclose(average_precision(order, positive), (1 + (1 / 2 + 2 / 3) / 2) / 2)  # trapezoids
    junk = np.array([False, True, False, False, False])  # the miss at rank 2 is ignored
    assert math.isclose(average_precision(order, positive, junk), 1.0)
    assert math.isclose(average_precision(order, positive, k=2, ap="rectangular"), 1 / 2)  # min(P, k) = 2
    assert math.isnan(average_precision(order, np.zeros(5, bool)))
    orders = np.stack([order, order[::-1]])
    pos = np.stack([positive, positive])
    rev = average_precision(order[::-1], positive)
    assert math.isclose(mean_average_precision(orders, pos), ((1 + (1 / 2 + 2 / 3) / 2) / 2 + rev) / 2)


def test_average_precision_equals_the_official_revisited_loops() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(3, 30))
        order = rng.permutation(n)
        ok, junk = rng.random(n) < 0.3, rng.random(n) < 0.2
        junk &= ~ok
        if not ok.any():
            continue
        k = int(rng.integers(0, n + 1))
        assert math.isclose(average_precision(order, ok, junk, k), _revisitop_ap(order, ok, junk, k), abs_tol=1e-12)


def test_junk_moves_behind_the_shortlist() -> None:
    order = np.array([[3, 0, 2, 1, 4]])
    junk = np.array([[True, False, False, True, False]])  # items 0 and 3
    assert junk_last(order, junk).tolist() == [[2, 1, 4, 3, 0]]
    assert junk_last(order, None) is order


def test_rerank_order_touches_only_the_shortlist() -> None:
    sim = np.array([[0.9, 0.8, 0.7, 0.1, 0.2]])
    order = global_ranking(sim)
    assert order.tolist() == [[0, 1, 2, 4, 3]]
    new = rerank_order(order, np.array([[0.0, 1.0, 2.0]]), k=3)
    assert new.tolist() == [[2, 1, 0, 4, 3]]


def test_ransac_finds_the_homography_of_a_warped_photograph_and_not_of_another() -> None:
    import cv2

    src = load_sources(("camera", "brick"), 256)
    cam = src["camera"][:160, :160]
    h = np.array([[0.9, 0.1, 8.0], [-0.08, 0.95, 5.0], [1e-4, 0.0, 1.0]])
    warped = cv2.warpPerspective(cam, h, (160, 160))
    (dq, pq), (dw, pw), (db, pb) = (extract_sift(im, 128) for im in (cam, warped, src["brick"][:160, :160]))
    i, j = mutual_nearest_neighbours(dq, dw)
    assert len(i) > 10 and len(set(j.tolist())) == len(j)
    same = ransac_inliers(dq, pq, dw, pw)
    other = ransac_inliers(dq, pq, db, pb)
    assert same > 20 and same > 4 * max(other, 1)
    assert ransac_inliers(dq[:3], pq[:3], dw, pw) == 0  # fewer than 4 matches


def test_ransac_takes_every_run_seed() -> None:
    """Issue 52: --seed goes up to 2**32 - 1, OpenCV's RNG seed is a C int: a large seed is mapped into it
    (deterministically), a small one is used as it is."""
    from iclr26_generative_vision.retrieval.verification import ransac_inliers

    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 64, (12, 2))
    desc = np.eye(12)
    big = [ransac_inliers(desc, xy, desc, xy + 3.0, seed=2**32 - 1) for _ in range(2)]
    assert big[0] == big[1] == 12 == ransac_inliers(desc, xy, desc, xy + 3.0, seed=7)
