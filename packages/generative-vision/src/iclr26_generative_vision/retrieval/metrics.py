"""Retrieval metrics and shortlist re-ranking (numpy), as the revisited ROxford/RParis protocol defines them.

``average_precision`` is the official revisited-protocol AP (Radenović et al., 2018; ``compute_map`` of
``revisitop``, used by ELViS's ``elvis/utils/revisited.py``): the ranking is cut at ``k`` (the paper's
``map_k``; ``k = 0``: the full list), junk items are removed, and the AP is the **trapezoidal** area under
the precision-recall steps::

    AP = Σ_j (1 / n) · ½ (P₀_j + P₁_j),   P₀_j = j / r_j (1 when r_j = 0),   P₁_j = (j + 1) / (r_j + 1)

over the positives j = 0, 1, … at zero-based junk-free ranks r_j, with ``n = min(#positives, len(cut
ranking))``. ``ap="rectangular"`` is the second, named metric (``compute_rectangular_ap``: the sum of
precision at each hit over n). :func:`junk_last` is the official ``rerank()``'s first step: junk (for
Hard, the easy positives too) moves behind every other item before the top k are taken.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = [
    "APKind",
    "average_precision",
    "global_ranking",
    "junk_last",
    "mean_average_precision",
    "rerank_order",
]

APKind = Literal["trapezoidal", "rectangular"]


def average_precision(
    order: np.ndarray,
    positive: np.ndarray,
    junk: np.ndarray | None = None,
    k: int = 0,
    *,
    ap: APKind = "trapezoidal",
) -> float:
    """AP of one ranked list: ``order [n]`` database indices best first, ``positive``/``junk`` ``bool [n_db]``.

    The list is cut at ``k`` first (``k = 0``: no cut), junk is removed, and ``n = min(P, len(cut list))``
    with P the number of (non-junk) positives; NaN when the query has no positive.
    """
    cut = order[:k] if k else order
    num_pos = int(positive.sum() if junk is None else (positive & ~junk).sum())
    if num_pos == 0:
        return float("nan")
    n = min(num_pos, len(cut))
    keep = cut if junk is None else cut[~junk[cut]]
    ranks = np.flatnonzero(positive[keep])  # zero-based junk-free ranks of the positives
    if ap == "rectangular":
        return float(((np.arange(len(ranks)) + 1) / (ranks + 1)).sum() / n)
    j = np.arange(len(ranks), dtype=np.float64)
    p0 = np.where(ranks == 0, 1.0, j / np.maximum(ranks, 1))
    p1 = (j + 1) / (ranks + 1)
    return float(((p0 + p1) / 2).sum() / n)


def mean_average_precision(
    orders: np.ndarray,
    positive: np.ndarray,
    junk: np.ndarray | None = None,
    k: int = 0,
    *,
    ap: APKind = "trapezoidal",
) -> float:
    """Mean AP over queries (``orders [Q, n]``, ``positive``/``junk`` ``bool [Q, n_db]``), NaN-queries skipped."""
    aps = [
        average_precision(orders[i], positive[i], None if junk is None else junk[i], k, ap=ap)
        for i in range(len(orders))
    ]
    return float(np.nanmean(aps)) if not all(np.isnan(aps)) else float("nan")


def global_ranking(global_sim: np.ndarray) -> np.ndarray:
    """The global ranking ``[Q, n_db]`` (best first; ties by database index); its first k are the shortlist."""
    return np.argsort(-global_sim, axis=1, kind="stable")


def junk_last(order: np.ndarray, junk: np.ndarray | None) -> np.ndarray:
    """Each ranking ``order [Q, n]`` with its query's junk items (``junk`` ``bool [Q, n_db]``) moved behind
    the others, both groups keeping their order (the official ``rerank()``: the shortlist holds no junk)."""
    if junk is None:
        return order
    is_junk = np.take_along_axis(junk, order, axis=1)
    return np.take_along_axis(order, np.argsort(is_junk, axis=1, kind="stable"), axis=1)


def rerank_order(global_order: np.ndarray, new_scores: np.ndarray, k: int) -> np.ndarray:
    """Re-rank the first ``k`` of each global ranking by ``new_scores [Q, k]`` (higher first); the rest keep
    their global order (paper: images below k keep their global order)."""
    k = min(k, global_order.shape[1])
    top = np.take_along_axis(global_order[:, :k], np.argsort(-new_scores[:, :k], axis=1, kind="stable"), axis=1)
    return np.concatenate([top, global_order[:, k:]], axis=1)
