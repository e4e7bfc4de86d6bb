"""Learning-curve statistics: confidence bands over seeds and the Efficiency Normalised Score (ENS).

ENS (paper §5, Table 1) compares algorithms at the point where learning on a task has
(almost) converged. Our reading, for one task with mean-over-seeds curves ``R_alg(t)`` on shared
evaluation steps:

1. min-max normalise all curves jointly: ``ŝ_alg(t) = (R_alg(t) − R_min) / (R_max − R_min)``, with
   ``R_min``/``R_max`` over every algorithm and step (so negative returns, as on Reacher, work);
2. for each threshold q ∈ {0.95, 0.90, 0.85}: ``t_q`` = the first step at which *any* algorithm's
   curve has made ``q ·`` its own peak improvement, ``R(t) − R(t_0) >= q (max_t R − R(t_0))``
   (curves that never improve on their first value do not set ``t_q``; if none improves, ``t_q`` is
   the last step);
3. ``ENS_alg = mean_q ŝ_alg(t_q)``.

An algorithm that learns faster is higher at ``t_q``, so ENS rewards sample efficiency rather than
only the final return.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["ENS_THRESHOLDS", "efficiency_normalised_score", "mean_ci"]

#: Thresholds q of the ENS (fractions of each curve's peak).
ENS_THRESHOLDS: tuple[float, ...] = (0.95, 0.90, 0.85)

# Two-sided 95% Student-t quantiles t_{0.975, dof}, dof = 1..10 (then the normal 1.96).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)


def mean_ci(values: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and 95% Student-t confidence interval over ``axis`` (the seeds).

    With a single seed the interval collapses to the mean (no spread can be estimated).

    Returns:
        ``(mean, low, high)``, each with ``axis`` removed.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[axis]
    mean = values.mean(axis=axis)
    if n < 2:
        return mean, mean.copy(), mean.copy()
    sem = values.std(axis=axis, ddof=1) / math.sqrt(n)
    t = _T975[n - 2] if n - 1 <= len(_T975) else 1.96
    return mean, mean - t * sem, mean + t * sem


def efficiency_normalised_score(
    curves: Mapping[str, Sequence[float]], thresholds: Sequence[float] = ENS_THRESHOLDS
) -> dict[str, float]:
    """ENS of each algorithm from mean learning curves on shared evaluation steps (module docstring).

    Args:
        curves: ``{algorithm: [R(t_0), R(t_1), ...]}``, all of the same length.
        thresholds: The q's.

    Returns:
        ``{algorithm: ENS in [0, 1]}``; all 0.5 when every curve is flat and equal.
    """
    names = list(curves)
    if not names:
        raise ValueError("efficiency_normalised_score needs at least one curve")
    arr = np.asarray([curves[n] for n in names], dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"curves must share a non-empty length, got shape {arr.shape}")
    lo, hi = arr.min(), arr.max()
    if hi - lo <= 0:
        return dict.fromkeys(names, 0.5)
    norm = (arr - lo) / (hi - lo)
    scores = np.zeros(len(names))
    for q in thresholds:
        firsts = [arr.shape[1] - 1]
        for row in arr:
            gain = row.max() - row[0]
            if gain > 0:
                firsts.append(int(np.nonzero(row - row[0] >= q * gain)[0][0]))
        t_q = min(firsts)
        scores += norm[:, t_q]
    return {n: float(s / len(thresholds)) for n, s in zip(names, scores, strict=True)}
