"""Open-set semi-supervised losses of FedOpenMatch and OpenMatch.

Notation (FedOpenMatch, OpenReview 5UrPAW3uI1, method section; OVA loss from OpenMatch, Saito et al. 2021):
``p`` are the K closed-set logits of the inlier head h_c, shape
``[B, K]``; ``q`` are the one-vs-all (OVA) logits of the OVA head h_d, shape ``[B, K, 2]`` where
``q[:, k, 0]`` is the "outlier" logit and ``q[:, k, 1]`` the "inlier" logit of sub-classifier k.
σ denotes the softmax over each 2-logit pair, so ``σ(q^k)_1`` is the probability that the sample
belongs to class k and ``σ(q^k)_0 = 1 - σ(q^k)_1``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = [
    "binary_entropy_loss",
    "logit_adjust",
    "logit_consistency_loss",
    "masked_cross_entropy",
    "ova_loss",
    "ova_pseudo_label_loss",
    "softmax_consistency_loss",
]


def _check_ova(q: Tensor) -> None:
    if q.ndim != 3 or q.shape[-1] != 2:
        raise ValueError(f"OVA logits must have shape [B, K, 2], got {tuple(q.shape)}")


def ova_loss(q: Tensor, y: Tensor) -> Tensor:
    """OVA loss with the hard-negative sub-classifier (OpenMatch, Saito et al. 2021):

    ``ℓ_ova(q, y) = −log σ(q^y)_1 + max_{k≠y} (−log σ(q^k)_0)``, averaged over the batch.

    The negative term takes the *hardest* negative sub-classifier: the one whose outlier probability
    is smallest (OpenMatch's ``max(-log p_0)``). Written with logs, that is ``−min_{k≠y} log σ(q^k)_0``.

    Args:
        q: OVA logits ``[B, K, 2]`` (K ≥ 2).
        y: Known-class labels ``[B]`` in ``[0, K)``.

    Returns:
        Scalar loss.
    """
    _check_ova(q)
    b, k, _ = q.shape
    if k < 2:
        raise ValueError("the OVA loss needs K >= 2 known classes (it has a negative sub-classifier)")
    if y.shape != (b,):
        raise ValueError(f"labels must have shape [{b}], got {tuple(y.shape)}")
    logp = F.log_softmax(q, dim=-1)  # [B, K, 2]
    rows = torch.arange(b, device=q.device)
    pos = -logp[rows, y, 1]  # [B]
    neg = -logp[..., 0]  # [B, K]
    neg = neg.masked_fill(F.one_hot(y, k).bool(), float("-inf"))
    hard_neg = neg.max(dim=1).values  # [B]
    return (pos + hard_neg).mean()


def logit_adjust(q: Tensor, weight: float, sign: int = 1) -> Tensor:
    """Logit adjustment of the OVA logits (Menon et al. 2021; FedOpenMatch Eq. 6):

    ``q^k ← q^k + sign · ω · log π`` with ``π = (π_out, π_in) = ((K−1)/K, 1/K)``, applied to every one of
    the K sub-classifiers.

    Used inside the training losses (a logit-adjusted loss). With ``sign = +1`` (the paper's Eq. 6 as
    written, and Menon's training-time form) the inlier logit is lowered by ``ω log K`` relative to the
    outlier logit during training, so the trained raw logits must favour "inlier" more: this counters the
    1 : (K−1) inlier/outlier imbalance that makes OpenMatch reject almost everything. ``sign = −1`` is the
    reviewer's reading (Menon's post-hoc sign); it pushes the other way.

    Args:
        q: OVA logits ``[B, K, 2]``.
        weight: ω ≥ 0 (0 disables the adjustment).
        sign: +1 or −1.

    Returns:
        Adjusted logits, same shape.
    """
    _check_ova(q)
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign}")
    k = q.shape[1]
    log_pi = torch.tensor([math.log((k - 1) / k) if k > 1 else 0.0, math.log(1.0 / k)], dtype=q.dtype, device=q.device)
    return q + sign * weight * log_pi


def ova_pseudo_label_loss(q: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
    """Binary cross-entropy on OVA pseudo-labels that passed the positive / negative thresholds.

    ``L = −( Σ_{(i,k)∈P} log σ(q_i^k)_1 + Σ_{(i,k)∈N} log σ(q_i^k)_0 ) / max(1, |P| + |N|)``

    Args:
        q: OVA logits ``[B, K, 2]``.
        positive: Bool mask ``[B, K]``: entry (i, k) is a confident inlier of class k.
        negative: Bool mask ``[B, K]``: entry (i, k) is a confident outlier of class k.

    Returns:
        Scalar loss (0 when no entry passed).
    """
    _check_ova(q)
    if positive.shape != q.shape[:2] or negative.shape != q.shape[:2]:
        raise ValueError(f"masks must have shape {tuple(q.shape[:2])}")
    if bool((positive & negative).any()):
        raise ValueError("an OVA entry cannot be both a positive and a negative pseudo-label")
    logp = F.log_softmax(q, dim=-1)
    total = -(logp[..., 1] * positive).sum() - (logp[..., 0] * negative).sum()
    count = (positive | negative).sum().clamp_min(1)
    return total / count


def binary_entropy_loss(q: Tensor) -> Tensor:
    """OpenMatch's open-set entropy minimisation (OEM): mean over samples and sub-classifiers of
    ``H(σ(q^k)) = −Σ_j σ(q^k)_j log σ(q^k)_j``; ``q``: ``[B, K, 2]``."""
    _check_ova(q)
    logp = F.log_softmax(q, dim=-1)
    return -(logp.exp() * logp).sum(-1).mean()


def softmax_consistency_loss(q1: Tensor, q2: Tensor) -> Tensor:
    """OpenMatch's soft open-set consistency regularisation (SOCR) on *probabilities*:

    ``L_socr = (1/B) Σ_i Σ_k Σ_j (σ(q1_i^k)_j − σ(q2_i^k)_j)²``; ``q1, q2``: ``[B, K, 2]``.
    """
    _check_ova(q1)
    _check_ova(q2)
    return ((q1.softmax(-1) - q2.softmax(-1)) ** 2).sum(dim=(1, 2)).mean()


def logit_consistency_loss(p1: Tensor, q1: Tensor, p2: Tensor, q2: Tensor) -> Tensor:
    """FedOpenMatch's logit-consistency regularisation (LCR) on *raw logits* of two views (without λ):

    ``L_lcr = (1/B) Σ_i [ mse(q_i, q̂_i) + mse(p_i, p̂_i) ]`` where ``mse(a, b)`` is the mean squared
    difference over the entries of one sample (2K OVA logits, K inlier logits).

    Args:
        p1, p2: Inlier logits ``[B, K]`` of the weak and strong view.
        q1, q2: OVA logits ``[B, K, 2]`` of the weak and strong view.
    """
    _check_ova(q1)
    _check_ova(q2)
    return F.mse_loss(q1, q2) + F.mse_loss(p1, p2)


def masked_cross_entropy(logits: Tensor, target: Tensor, mask: Tensor) -> Tensor:
    """FixMatch's unlabelled loss: ``(1/B) Σ_i 1[mask_i] · CE(logits_i, target_i)`` (normalised by the
    whole batch, as FixMatch does); ``logits``: ``[B, K]``, ``target``/``mask``: ``[B]``."""
    ce = F.cross_entropy(logits, target, reduction="none")
    return (ce * mask.to(ce.dtype)).mean()
