"""Learning-curve statistics: confidence bands over seeds and the Efficiency Normalised Score (ENS).

ENS (paper §5, Table 1) compares algorithms at the point where learning on a task has (almost)
converged: "the step at which any baseline first reaches 95 % (90 %, 85 %) of its peak". Our reading,
for one task with mean-over-seeds curves ``R_alg(t)`` on shared evaluation steps:

1. min-max normalise all curves jointly: ``ŝ_alg(t) = (R_alg(t) − R_min) / (R_max − R_min)``, with
   ``R_min``/``R_max`` over every algorithm and step (so negative returns, as on Reacher, work);
2. a curve *learns* when its best value beats its first by more than :data:`LEARN_FRACTION` of
   ``R_max − R_min``; curves that do not learn never set the step (a noisy early bump of a curve that
   learns nothing cannot decide the comparison), and when no curve learns the ENS is undefined (NaN);
3. one fixed return level per threshold q ∈ {0.95, 0.90, 0.85}, reached by every learning curve:
   ``L_q = S + q (P − S)`` with ``S`` the lowest first value and ``P`` the lowest peak of the learning
   curves; ``t_q`` = the first step at which any learning curve reaches ``L_q``;
4. ``ENS_alg = mean_q ŝ_alg(t_q)``.

An algorithm that learns faster is higher at ``t_q``, so ENS rewards sample efficiency rather than
only the final return. The trivial level (the claim's chance) is the untrained policy's: the highest
normalised first value, ``max_alg ŝ_alg(t_0)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ENS_THRESHOLDS", "LEARN_FRACTION", "efficiency_normalised_score", "ens_details", "mean_ci"]

#: Thresholds q of the ENS (fractions of the common improvement S → P).
ENS_THRESHOLDS: tuple[float, ...] = (0.95, 0.90, 0.85)
#: A curve learns when its best value beats its first by more than this share of the joint return range.
LEARN_FRACTION = 0.1

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


def ens_details(
    curves: Mapping[str, Sequence[float]],
    thresholds: Sequence[float] = ENS_THRESHOLDS,
    learn_fraction: float = LEARN_FRACTION,
) -> dict[str, Any]:
    """ENS with its ingredients (module docstring): ``{"ens": {alg: score or NaN}, "defined": bool,
    "learners": [alg], "levels": [L_q], "steps": [t_q], "chance": max_alg ŝ_alg(t_0)}``."""
    names = list(curves)
    if not names:
        raise ValueError("efficiency_normalised_score needs at least one curve")
    arr = np.asarray([curves[n] for n in names], dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"curves must share a non-empty length, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("curves hold NaN or infinite returns")
    undefined = {"ens": dict.fromkeys(names, math.nan), "defined": False, "learners": [], "levels": [], "steps": []}
    lo, hi = float(arr.min()), float(arr.max())
    if hi - lo <= 0:
        return {**undefined, "chance": math.nan}
    norm = (arr - lo) / (hi - lo)
    chance = float(norm[:, 0].max())
    learn = (arr.max(axis=1) - arr[:, 0]) > learn_fraction * (hi - lo)
    if not learn.any():
        return {**undefined, "chance": chance}
    rows = arr[learn]
    start, peak = float(rows[:, 0].min()), float(rows.max(axis=1).min())
    levels = [start + q * (peak - start) for q in thresholds]
    steps = [min(int(np.nonzero(row >= level)[0][0]) for row in rows) for level in levels]
    scores = norm[:, steps].mean(axis=1)
    return {
        "ens": {n: float(v) for n, v in zip(names, scores, strict=True)},
        "defined": True,
        "learners": [n for n, ok in zip(names, learn, strict=True) if ok],
        "levels": levels,
        "steps": steps,
        "chance": chance,
    }


def efficiency_normalised_score(
    curves: Mapping[str, Sequence[float]], thresholds: Sequence[float] = ENS_THRESHOLDS
) -> dict[str, float]:
    """ENS of each algorithm from mean learning curves on shared evaluation steps (module docstring).

    Args:
        curves: ``{algorithm: [R(t_0), R(t_1), ...]}``, all of the same length.
        thresholds: The q's.

    Returns:
        ``{algorithm: ENS in [0, 1]}``; NaN for every algorithm when no curve learns.
    """
    return ens_details(curves, thresholds)["ens"]
