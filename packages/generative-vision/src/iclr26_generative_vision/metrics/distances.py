"""Distances between sample sets and to a known Gaussian.

* :func:`wasserstein_empirical`: exact ``W_p`` between two equal-size point clouds ``[n, D]`` (1-D: sorted
  samples; D > 1: optimal assignment with SciPy's Hungarian solver).
* :func:`frechet_distance`: ``|μ₁ − μ₂|² + tr(Σ₁ + Σ₂ − 2 (Σ₁^{1/2} Σ₂ Σ₁^{1/2})^{1/2})`` between the
  Gaussian fits of two feature sets (the formula of FID; our features are not Inception features).
* :func:`gaussian_mode_stats`: mode shift, spread ratio and the mass outside the true class's 99% region.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import linalg, optimize, stats

__all__ = ["frechet_distance", "gaussian_mode_stats", "wasserstein_empirical"]


def wasserstein_empirical(x: torch.Tensor, y: torch.Tensor, p: int = 2) -> float:
    """Exact ``W_p`` between the empirical measures of ``x`` and ``y`` (both ``[n, D]``, same ``n``)."""
    if x.ndim == 1:
        x, y = x[:, None], y[:, None]
    if x.shape != y.shape:
        raise ValueError(f"wasserstein_empirical needs equal shapes, got {tuple(x.shape)} and {tuple(y.shape)}")
    xd, yd = x.double(), y.double()
    if x.shape[1] == 1:
        cost = (xd[:, 0].sort().values - yd[:, 0].sort().values).abs() ** p
        return float(cost.mean() ** (1.0 / p))
    c = (torch.cdist(xd, yd) ** p).cpu().numpy()
    rows, cols = optimize.linear_sum_assignment(c)
    return float(c[rows, cols].mean() ** (1.0 / p))


def frechet_distance(feats_a: np.ndarray, feats_b: np.ndarray) -> float:
    """Fréchet distance between Gaussian fits of ``feats_a`` ``[n, F]`` and ``feats_b`` ``[m, F]``."""
    a, b = np.asarray(feats_a, np.float64), np.asarray(feats_b, np.float64)
    mu_a, mu_b = a.mean(0), b.mean(0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    covmean = linalg.sqrtm(cov_a @ cov_b)
    if not np.isfinite(covmean).all():
        eye = np.eye(cov_a.shape[0]) * 1e-6
        covmean = linalg.sqrtm((cov_a + eye) @ (cov_b + eye))
    covmean = np.real(covmean)
    return float(((mu_a - mu_b) ** 2).sum() + np.trace(cov_a) + np.trace(cov_b) - 2 * np.trace(covmean))


def gaussian_mode_stats(samples: torch.Tensor, mean: torch.Tensor, std: float, level: float = 0.99) -> dict[str, float]:
    """How ``samples`` ``[n, D]`` of one class differ from its true component ``N(mean, std² I)``.

    Returns ``mode_shift`` (``|mean(samples) − μ|``), ``spread_ratio`` (sample std / true std, averaged over
    dimensions) and ``outside_mass`` (fraction of samples outside the true ``level`` region, a ball of
    Mahalanobis radius ``sqrt(χ²_D(level))``; the truth has ``1 − level``).
    """
    x = samples.double()
    mu = mean.double().to(x.device)
    d = x.shape[1]
    radius = float(np.sqrt(stats.chi2.ppf(level, d)))
    maha = ((x - mu) / std).norm(dim=1)
    return {
        "mode_shift": float((x.mean(0) - mu).norm()),
        "spread_ratio": float(x.std(0).mean() / std),
        "outside_mass": float((maha > radius).double().mean()),
    }
