"""Ranking metrics exactly as Liang et al. (2018) and the EASE/EDLAE/DEQL papers define them.

For user ``u`` with held-out set ``I_u`` and the top-``k`` list ``ω(1..k)`` (folded-in items excluded):

* ``Recall@k = Σ_{r≤k} 1[ω(r) ∈ I_u] / min(k, |I_u|)`` (normalised so that 1 is reachable);
* ``DCG@k = Σ_{r≤k} 1[ω(r) ∈ I_u] / log2(r + 1)``, ``IDCG@k = Σ_{r≤min(k,|I_u|)} 1 / log2(r + 1)``,
  ``NDCG@k = DCG@k / IDCG@k`` (binary relevance).

Scores: ``[m, n]`` NumPy array or torch tensor; held-out sets: ``[m, n]`` sparse or dense 0/1.
Users without held-out items are an error (the protocol never evaluates them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr26_recsys.data.validation import InteractionError, check_k, shape_of

__all__ = [
    "evaluate",
    "mask_seen",
    "ndcg_at_k",
    "per_user_metrics",
    "random_ranking_metrics",
    "recall_at_k",
    "top_k",
]


def _scores(scores: Any) -> np.ndarray:
    if type(scores).__module__.startswith("torch"):
        scores = scores.detach().cpu().numpy()
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 2:
        raise InteractionError(f"scores must be a [users, items] matrix, got {arr.ndim} dimension(s)")
    if np.isnan(arr).any():
        raise InteractionError("scores hold NaN")
    return arr


def _binary(x: Any, shape: tuple[int, int], name: str) -> sp.csr_matrix:
    m = sp.csr_matrix(x) if sp.issparse(x) else sp.csr_matrix(np.asarray(x))
    if shape_of(m) != shape:
        raise InteractionError(f"{name} has shape {shape_of(m)}, the scores {shape}")
    return sp.csr_matrix(m > 0, dtype=np.float64)


def top_k(scores: Any, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores per row, best first: ``[m, n]`` → ``[m, k]`` int64."""
    arr = _scores(scores)
    check_k(k, arr.shape[1])
    part = np.argpartition(-arr, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(arr, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1).astype(np.int64)


def mask_seen(scores: Any, seen: Any) -> np.ndarray:
    """Copy of ``scores`` with the entries where ``seen > 0`` set to ``−inf``."""
    arr = _scores(scores).copy()
    s = _binary(seen, arr.shape, "seen")
    rows, cols = s.nonzero()
    arr[rows, cols] = -np.inf
    return arr


def _hits(scores: Any, holdout: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    arr = _scores(scores)
    held = _binary(holdout, arr.shape, "holdout")
    counts = np.asarray(held.sum(1)).ravel().astype(np.int64)
    if (counts == 0).any():
        raise InteractionError(
            f"{int((counts == 0).sum())} user(s) have no held-out items (first: row {int(np.argmax(counts == 0))}); "
            "drop them before evaluating"
        )
    idx = top_k(arr, k)
    hits = np.take_along_axis(held.toarray(), idx, axis=1)
    return hits, counts


def recall_at_k(scores: Any, holdout: Any, k: int) -> np.ndarray:
    """Per-user ``Recall@k`` (``[m]``): hits in the top ``k`` divided by ``min(k, |held-out|)``."""
    hits, counts = _hits(scores, holdout, k)
    return hits.sum(1) / np.minimum(k, counts)


def ndcg_at_k(scores: Any, holdout: Any, k: int) -> np.ndarray:
    """Per-user ``NDCG@k`` (``[m]``) with binary relevance."""
    hits, counts = _hits(scores, holdout, k)
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = hits @ discount
    idcg = np.cumsum(discount)[np.minimum(k, counts) - 1]
    return dcg / idcg


def per_user_metrics(
    scores: Any,
    fold_in: Any,
    holdout: Any,
    *,
    recall_ks: Iterable[int] = (20, 50),
    ndcg_ks: Iterable[int] = (20, 100),
) -> dict[str, np.ndarray]:
    """Mask ``fold_in``, then per-user ``recall@k`` and ``ndcg@k`` (``[m]`` each), from one top-``max k``
    list per user (the same values as :func:`recall_at_k` / :func:`ndcg_at_k` on the masked scores)."""
    masked = mask_seen(scores, fold_in)
    recall_ks, ndcg_ks = tuple(recall_ks), tuple(ndcg_ks)
    k_max = max((*recall_ks, *ndcg_ks))
    hits, counts = _hits(masked, holdout, k_max)
    out: dict[str, np.ndarray] = {}
    for k in recall_ks:
        out[f"recall@{k}"] = hits[:, :k].sum(1) / np.minimum(k, counts)
    for k in ndcg_ks:
        discount = 1.0 / np.log2(np.arange(2, k + 2))
        idcg = np.cumsum(discount)[np.minimum(k, counts) - 1]
        out[f"ndcg@{k}"] = (hits[:, :k] @ discount) / idcg
    return out


def evaluate(
    scores: Any,
    fold_in: Any,
    holdout: Any,
    *,
    recall_ks: Iterable[int] = (20, 50),
    ndcg_ks: Iterable[int] = (20, 100),
) -> dict[str, float]:
    """Mask ``fold_in``, then mean ``recall@k`` and ``ndcg@k`` over users, e.g. ``{"recall@20": ...}``."""
    per = per_user_metrics(scores, fold_in, holdout, recall_ks=recall_ks, ndcg_ks=ndcg_ks)
    return {k: float(v.mean()) for k, v in per.items()}


def random_ranking_metrics(
    fold_in: Any,
    holdout: Any,
    *,
    recall_ks: Iterable[int] = (20, 50),
    ndcg_ks: Iterable[int] = (20, 100),
) -> dict[str, float]:
    """Expected metrics of a uniformly random ranking of each user's candidates (the no-skill level).

    Candidates ``C_u`` are the items not folded in; a random ranking puts a held-out item at each rank
    ``r <= |C_u|`` with probability ``q_u = |I_u| / |C_u|``, so ``E[hits@k] = min(k, |C_u|)·q_u`` and
    ``E[DCG@k] = q_u·Σ_{r<=min(k,|C_u|)} 1/log2(r+1)``; the normalisers are those of :func:`evaluate`.
    """
    held = sp.csr_matrix(holdout) if sp.issparse(holdout) else sp.csr_matrix(np.asarray(holdout))
    seen = _binary(fold_in, shape_of(held), "fold_in")
    held = _binary(held, shape_of(held), "holdout")
    n_held = np.asarray(held.sum(1)).ravel()
    if (n_held == 0).any():
        raise InteractionError(f"{int((n_held == 0).sum())} user(s) have no held-out items")
    n_cand = shape_of(held)[1] - np.asarray(seen.sum(1)).ravel()
    q = n_held / n_cand
    out: dict[str, float] = {}
    for k in recall_ks:
        out[f"recall@{k}"] = float((np.minimum(k, n_cand) * q / np.minimum(k, n_held)).mean())
    for k in ndcg_ks:
        cum = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, k + 2)))])
        dcg = q * cum[np.minimum(k, n_cand).astype(np.int64)]
        out[f"ndcg@{k}"] = float((dcg / cum[np.minimum(k, n_held).astype(np.int64)]).mean())
    return out
