"""Moment-matched (Gamma) approximation of the split-half shuffle distribution (issue 38).

The split-half dependence distribution of :func:`~iclr26_theory_metrics.ops.hsic.split_half_dependence` is the
permutation distribution of the biased HSIC between the two halves S₁, S₂ (n = m/2 rows each):
H_π = Σ_ij (HKH)_ij L_{π(i)π(j)} / (n − 1)². Its moments need no shuffles:

- mean (exact, over all n! shuffles): E_π H = (1 − k̄)(1 − l̄)/(n − 1), k̄, l̄ the mean off-diagonal kernel values
  (RBF, unit diagonal; :func:`~iclr26_theory_metrics.ops.hsic.split_half_mean`);
- variance (Gretton et al., 2008, the asymptotic variance of the biased HSIC under independence, their
  ``hsicTestGamma``): Var HSIC_b = 72 (n−4)(n−5) / (n(n−1)(n−2)(n−3)) · mean_{i≠j} (K̃_ij L̃_ij / 6)², K̃ = HKH,
  L̃ = HLH, HSIC_b = tr(K̃L̃)/n²; ours is HSIC_b · n²/(n−1)², so its variance is scaled by n⁴/(n−1)⁴.

The Gamma with that mean and variance (shape α = μ²/v, scale v/μ) is the moment-matched null: O(n²) time and no
shuffles. :func:`split_half_gamma` returns its ``n_points`` quantiles at (i + ½)/n_points, a deterministic stand-in
for the shuffle sample that :func:`~iclr26_theory_metrics.ops.hsic.classify_subset` accepts. Where it is accurate
is measured against the shuffles in ``tests/ops/test_hsic_null.py`` (mean exact; variance and quantiles within the
tolerances written there); it is an option, the protocol's default stays the paper's 200 shuffles.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from iclr26_theory_metrics.ops.hsic import (
    HSICInputError,
    Kernel,
    Sigma,
    _center,
    _permutations,
    _subset_features,
    gram,
)

__all__ = ["split_half_gamma", "split_half_moments"]


def split_half_moments(
    features: torch.Tensor,
    subset: torch.Tensor | Sequence[int] | None = None,
    *,
    kernel: Kernel = "rbf",
    sigma: Sigma = None,
    generator: torch.Generator | None = None,
) -> tuple[float, float]:
    """``(mean, variance)`` of the split-half shuffle distribution of H for the split that
    :func:`~iclr26_theory_metrics.ops.hsic.split_half_dependence` draws from the same ``generator`` state:
    the exact permutation mean and Gretton et al.'s (2008) null variance (module docstring). ``features [N, d]``
    with row indices ``subset`` (None = all rows)."""
    feats = _subset_features(features, subset, "features")
    m = feats.shape[0]
    if m < 20:
        raise HSICInputError(f"subset: the moment-matched null needs at least 20 samples (halves of 10), got {m}")
    n = m // 2
    split = _permutations(m, 1, generator, feats.device)[0]
    k = gram(feats[split[:n]], kernel, sigma)
    l = gram(feats[split[n : 2 * n]], kernel, sigma)  # noqa: E741
    off = ~torch.eye(n, dtype=torch.bool, device=feats.device)
    mean = float(torch.diagonal(_center(k)).sum() * (l.diagonal().mean() - l[off].mean()) / (n - 1) ** 2)
    kc, lc = _center(k), _center(l)
    b = (kc * lc / 6.0) ** 2
    var_b = 72.0 * (n - 4) * (n - 5) / (n * (n - 1) * (n - 2) * (n - 3)) * float(b[off].mean())
    return mean, var_b * n**4 / (n - 1) ** 4


def split_half_gamma(
    features: torch.Tensor,
    subset: torch.Tensor | Sequence[int] | None = None,
    n_points: int = 200,
    *,
    kernel: Kernel = "rbf",
    sigma: Sigma = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The moment-matched Gamma null ``[n_points]`` (float64): its quantiles at (i + ½)/n_points, i = 0 … n_points−1,
    in place of ``n_points`` shuffles (same split as :func:`split_half_moments` for the same ``generator``)."""
    from scipy.stats import gamma

    if n_points < 1:
        raise HSICInputError(f"n_points: expected at least 1, got {n_points}")
    mean, var = split_half_moments(features, subset, kernel=kernel, sigma=sigma, generator=generator)
    if not mean > 0 or not var > 0:
        raise HSICInputError(f"features: degenerate split-half moments (mean {mean:g}, variance {var:g})")
    q = (torch.arange(n_points, dtype=torch.float64) + 0.5) / n_points
    return torch.as_tensor(gamma.ppf(q.numpy(), mean**2 / var, scale=var / mean), dtype=torch.float64)
