"""The OpenMatch inference rule and the open-set metrics of FedOpenMatch.

FedOpenMatch (OpenReview 5UrPAW3uI1), inference and evaluation; OpenMatch (Saito et al. 2021), Sec. 3.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import Tensor

__all__ = ["OpenSetMetrics", "msp_predict", "open_set_metrics", "openmatch_predict"]


def openmatch_predict(p: Tensor, q: Tensor) -> Tensor:
    """OpenMatch inference: ``k̂ = argmax_k p_k``; predict "unknown" (label K) when ``σ(q^{k̂})_0 > 0.5``.

    Args:
        p: Inlier logits ``[B, K]``.
        q: OVA logits ``[B, K, 2]``.

    Returns:
        Labels ``[B]`` in ``[0, K]`` (K = unknown).
    """
    k = p.shape[1]
    khat = p.argmax(dim=1)
    outlier = q.softmax(-1)[torch.arange(len(khat), device=p.device), khat, 0]
    return torch.where(outlier > 0.5, torch.full_like(khat, k), khat)


def msp_predict(p: Tensor, threshold: float) -> Tensor:
    """Maximum-softmax-probability rejection for methods without an OVA head (FixMatch): ``argmax p``, or
    "unknown" (K) when ``max softmax(p) < threshold``."""
    conf, khat = p.softmax(1).max(1)
    return torch.where(conf < threshold, torch.full_like(khat, p.shape[1]), khat)


@dataclass(frozen=True)
class OpenSetMetrics:
    """Open-set evaluation of one model on a test set with known classes ``0..K-1`` and unknowns ``K``.

    Attributes:
        closed_acc: Accuracy of ``argmax p`` on the known-class samples (no rejection).
        open_bacc: Balanced accuracy over the K+1 classes (unknowns are one class) of the open-set
            prediction: the mean per-class recall.
        unknown_recall: Fraction of unknown samples predicted "unknown".
        known_recall: Mean per-class recall over the K known classes under open-set prediction.
    """

    closed_acc: float
    open_bacc: float
    unknown_recall: float
    known_recall: float

    def to_dict(self) -> dict[str, float]:
        """Plain dict."""
        return asdict(self)


def open_set_metrics(closed_pred: Tensor, open_pred: Tensor, target: Tensor, num_known: int) -> OpenSetMetrics:
    """Compute :class:`OpenSetMetrics`.

    Args:
        closed_pred: ``argmax p`` ``[N]`` in ``[0, K)``.
        open_pred: Open-set prediction ``[N]`` in ``[0, K]``.
        target: True labels ``[N]`` in ``[0, K]`` (K = unknown).
        num_known: K.
    """
    if not (closed_pred.shape == open_pred.shape == target.shape) or target.ndim != 1:
        raise ValueError("predictions and targets must be 1-D tensors of the same length")
    known = target < num_known
    closed_acc = float((closed_pred[known] == target[known]).float().mean()) if bool(known.any()) else float("nan")
    recalls = []
    for c in range(num_known + 1):
        sel = target == c
        if bool(sel.any()):
            recalls.append(float((open_pred[sel] == c).float().mean()))
    unknown = target == num_known
    unknown_recall = float((open_pred[unknown] == num_known).float().mean()) if bool(unknown.any()) else float("nan")
    known_recalls = recalls[:-1] if bool(unknown.any()) else recalls
    return OpenSetMetrics(
        closed_acc=closed_acc,
        open_bacc=sum(recalls) / len(recalls) if recalls else float("nan"),
        unknown_recall=unknown_recall,
        known_recall=sum(known_recalls) / len(known_recalls) if known_recalls else float("nan"),
    )
