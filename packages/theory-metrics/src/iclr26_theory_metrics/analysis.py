"""Summaries over the training runs of the optimizer study (Zhao et al., ICLR 2026): the best run per optimizer
(Table 2's selection), the NC3 ~ log10 NC0 regression and the momentum ablation.

Light module (no torch): it reads the per-run summary dicts that ``neural-collapse``'s ``train.run`` writes
(keys ``optimizer``, ``lr``, ``momentum``, ``weight_decay``, ``role``, ``label``, ``valid``, ``final``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["best_by_optimizer", "momentum_comparison", "nc3_nc0_regression", "summarise"]

_SHOWN = ("nc0", "nc1", "nc2", "nc2w", "nc3", "nc4", "train_acc", "test_acc", "train_loss")


def best_by_optimizer(runs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per optimizer, its valid grid run with the lowest final NC3 (the paper's Table 2 selection)."""
    best: dict[str, dict[str, Any]] = {}
    for r in runs:
        if r["role"] != "grid" or not r["valid"]:
            continue
        cur = best.get(r["optimizer"])
        if cur is None or r["final"]["nc3"] < cur["nc3"]:
            best[r["optimizer"]] = {"label": r["label"], **{k: r["final"][k] for k in _SHOWN}}
    return best


def nc3_nc0_regression(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Least-squares fit NC3 = a + b·log10(NC0) over the valid runs (the paper's Fig./R² analysis).

    Returns ``n``, ``slope``, ``intercept``, ``r2`` and the two-sided ``p_value`` of the slope (NaN when fewer
    than 3 usable runs or constant NC0).
    """
    pts = [
        (math.log10(r["final"]["nc0"]), r["final"]["nc3"])
        for r in runs
        if r["valid"]
        and r["final"]["nc0"] > 0
        and math.isfinite(r["final"]["nc0"])
        and math.isfinite(r["final"]["nc3"])
    ]
    out: dict[str, Any] = {"n": len(pts), "slope": math.nan, "intercept": math.nan, "r2": math.nan, "p_value": math.nan}
    if len(pts) < 3 or len({round(x, 12) for x, _ in pts}) < 2:
        return out
    from scipy.stats import linregress

    fit: Any = linregress([x for x, _ in pts], [y for _, y in pts])  # scipy's result type is not typed
    slope, intercept, rvalue, pvalue = fit.slope, fit.intercept, fit.rvalue, fit.pvalue
    out.update(slope=float(slope), intercept=float(intercept), r2=float(rvalue) ** 2, p_value=float(pvalue))
    return out


def momentum_comparison(runs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The SGD ablation run (momentum 0) and the grid run it was derived from (same lr and WD)."""
    ablation = next((r for r in runs if r["role"] == "ablation"), None)
    if ablation is None:
        return None
    base = next(
        (
            r
            for r in runs
            if r["role"] == "grid"
            and r["optimizer"] == "sgd"
            and r["momentum"] > 0
            and r["lr"] == ablation["lr"]
            and r["weight_decay"] == ablation["weight_decay"]
        ),
        None,
    )
    if base is None:
        return None

    def view(r: dict[str, Any]) -> dict[str, Any]:
        return {
            "label": r["label"],
            "valid": r["valid"],
            "nc1_epoch_mean": r["nc1_epoch_mean"],
            "nc3_epoch_mean": r["nc3_epoch_mean"],
            **{k: r["final"][k] for k in ("nc0", "nc1", "nc3", "train_loss", "train_acc")},
        }

    return {"with_momentum": view(base), "without_momentum": view(ablation)}


def summarise(runs: Sequence[dict[str, Any]], *, valid_accuracy: float) -> dict[str, Any]:
    """``best_by_optimizer``, ``regression``, ``momentum`` and counts, for results.json."""
    return {
        "n_runs": len(runs),
        "n_valid": sum(1 for r in runs if r["valid"]),
        "valid_accuracy": valid_accuracy,
        "best_by_optimizer": best_by_optimizer(runs),
        "regression": nc3_nc0_regression(runs),
        "momentum": momentum_comparison(runs),
    }
