"""CryoLVM's fine-tuning loss: MSE plus the histogram distribution alignment term (paper §3.3, Eq. 3–5).

Soft histogram of a map ``X`` with ``N`` voxels over bin centres ``c_j``:
``h(X)_j = (1/N) Σ_i exp(−½ ((x_i − c_j) / σ)²)``, normalised to sum 1. With ``p = h(X)``, ``q = h(X*)``,
``m = (p + q)/2`` the alignment term is the Jensen–Shannon divergence
``L_Hist(X, X*) = ½ Σ_k p_k log(p_k / m_k) + ½ Σ_k q_k log(q_k / m_k)``, and the loss is
``L = α · MSE(X, X*) + (1 − α) · L_Hist(X, X*)`` (α is not given in the paper; a config switch here).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["histogram_js", "restoration_loss", "soft_histogram"]


def soft_histogram(
    x: torch.Tensor, bins: int = 64, lo: float = 0.0, hi: float = 1.0, sigma: float | None = None
) -> torch.Tensor:
    """``[B, bins]`` soft histograms (rows sum to 1) of ``x`` ``[B, ...]``; σ defaults to the bin width."""
    centres = torch.linspace(lo, hi, bins, device=x.device, dtype=x.dtype)
    width = (hi - lo) / max(bins - 1, 1) if sigma is None else sigma
    flat = x.reshape(x.shape[0], -1, 1)
    h = torch.exp(-0.5 * ((flat - centres) / width) ** 2).mean(1)
    return h / h.sum(-1, keepdim=True).clamp_min(1e-12)


def histogram_js(
    pred: torch.Tensor, target: torch.Tensor, bins: int = 64, lo: float = 0.0, hi: float = 1.0, eps: float = 1e-8
) -> torch.Tensor:
    """Mean over the batch of the Jensen–Shannon divergence of the two maps' soft histograms (nats)."""
    p, q = soft_histogram(pred, bins, lo, hi), soft_histogram(target, bins, lo, hi)
    m = (p + q) / 2
    kl_pm = (p * (torch.log(p + eps) - torch.log(m + eps))).sum(-1)
    kl_qm = (q * (torch.log(q + eps) - torch.log(m + eps))).sum(-1)
    return (0.5 * kl_pm + 0.5 * kl_qm).mean()


def restoration_loss(pred: torch.Tensor, target: torch.Tensor, alpha: float, bins: int = 64) -> torch.Tensor:
    """``α · MSE + (1 − α) · L_Hist`` (α = 1: plain MSE, no histogram term)."""
    mse = F.mse_loss(pred, target)
    if alpha >= 1.0:
        return mse
    return alpha * mse + (1 - alpha) * histogram_js(pred, target, bins)
