"""Retrieval metrics and shortlist re-ranking (numpy).

``average_precision`` is the revisited-protocol AP (Radenović et al., 2018): junk items are removed from
the ranking before scoring, and ``k`` truncates it (mAP@k, the paper's ``map_k``; ``k = 0``: full list).
"""

from __future__ import annotations

import numpy as np

__all__ = ["average_precision", "global_ranking", "mean_average_precision", "rerank_order"]


def average_precision(order: np.ndarray, positive: np.ndarray, junk: np.ndarray | None = None, k: int = 0) -> float:
    """AP of one ranked list: ``order [n]`` database indices best first, ``positive``/``junk`` ``bool [n_db]``.

    ``AP@k = (1 / min(P, k)) Σ_{r ≤ k} precision@r · rel_r`` with ``P`` the number of positives; NaN when
    the query has no positive.
    """
    keep = order if junk is None else order[~junk[order]]
    rel = positive[keep].astype(np.float64)
    num_pos = int(positive.sum() if junk is None else (positive & ~junk).sum())
    if num_pos == 0:
        return float("nan")
    if k:
        rel = rel[:k]
        num_pos = min(num_pos, k)
    hits = np.cumsum(rel)
    precision = hits / np.arange(1, len(rel) + 1)
    return float((precision * rel).sum() / num_pos)


def mean_average_precision(
    orders: np.ndarray, positive: np.ndarray, junk: np.ndarray | None = None, k: int = 0
) -> float:
    """Mean AP over queries (``orders [Q, n]``, ``positive``/``junk`` ``bool [Q, n_db]``), NaN-queries skipped."""
    aps = [average_precision(orders[i], positive[i], None if junk is None else junk[i], k) for i in range(len(orders))]
    return float(np.nanmean(aps)) if not all(np.isnan(aps)) else float("nan")


def global_ranking(global_sim: np.ndarray) -> np.ndarray:
    """The global ranking ``[Q, n_db]`` (best first; ties by database index); its first k are the shortlist."""
    return np.argsort(-global_sim, axis=1, kind="stable")


def rerank_order(global_order: np.ndarray, new_scores: np.ndarray, k: int) -> np.ndarray:
    """Re-rank the first ``k`` of each global ranking by ``new_scores [Q, k]`` (higher first); the rest keep
    their global order (paper: images below k keep their global order)."""
    k = min(k, global_order.shape[1])
    top = np.take_along_axis(global_order[:, :k], np.argsort(-new_scores[:, :k], axis=1, kind="stable"), axis=1)
    return np.concatenate([top, global_order[:, k:]], axis=1)
