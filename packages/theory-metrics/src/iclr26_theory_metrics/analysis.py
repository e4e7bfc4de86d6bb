"""Summaries over the training runs of the optimizer study (Zhao et al., ICLR 2026): the best run per optimizer
(Table 2's selection), the NC3 ~ log10 NC0 regression and the momentum ablation.

Light module (no torch): it reads the per-run summary dicts that ``neural-collapse``'s ``train.run`` writes
(keys ``optimizer``, ``lr``, ``momentum``, ``weight_decay``, ``role``, ``label``, ``valid``, ``final``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["best_by_optimizer", "momentum_comparison", "nc3_nc0_regression", "summarise", "value_at_loss"]

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


def nc3_nc0_regression(runs: Sequence[dict[str, Any]], *, key: str = "nc3") -> dict[str, Any]:
    """Least-squares fit NC3 = a + b·log10(NC0) over the valid runs (the paper's regression of NC3 on NC0;
    ``key`` picks the NC3 form: ``nc3``, ``nc3_alignment`` or ``nc3_duality``).

    Returns ``n``, ``slope``, ``intercept``, ``r2`` and the two-sided ``p_value`` of the slope (NaN when fewer
    than 3 usable runs or constant NC0).
    """
    pts = [
        (math.log10(r["final"]["nc0"]), float(r["final"][key]))
        for r in runs
        if r["valid"]
        and r["final"]["nc0"] > 0
        and math.isfinite(r["final"]["nc0"])
        and r["final"].get(key) is not None
        and math.isfinite(r["final"][key])
    ]
    out: dict[str, Any] = {"n": len(pts), "slope": math.nan, "intercept": math.nan, "r2": math.nan, "p_value": math.nan}
    if len(pts) < 3 or len({round(x, 12) for x, _ in pts}) < 2:
        return out
    from scipy.stats import linregress

    fit: Any = linregress([x for x, _ in pts], [y for _, y in pts])  # scipy's result type is not typed
    slope, intercept, rvalue, pvalue = fit.slope, fit.intercept, fit.rvalue, fit.pvalue
    out.update(slope=float(slope), intercept=float(intercept), r2=float(rvalue) ** 2, p_value=float(pvalue))
    return out


def value_at_loss(losses: Sequence[float | None], values: Sequence[float | None], level: float) -> float:
    """The value (e.g. NC1) of a per-epoch trajectory at the first epoch whose training loss is ≤ ``level``,
    interpolated log-linearly between that epoch and the one before (NaN when the loss never gets there)."""
    ls = [math.nan if v is None else float(v) for v in losses]
    vs = [math.nan if v is None else float(v) for v in values]
    for e, loss in enumerate(ls):
        if not (math.isfinite(loss) and loss <= level):
            continue
        if e == 0 or not (ls[e - 1] > loss > 0 and vs[e - 1] > 0 and vs[e] > 0):
            return vs[e]
        f = (math.log(ls[e - 1]) - math.log(level)) / (math.log(ls[e - 1]) - math.log(loss))
        return math.exp((1.0 - f) * math.log(vs[e - 1]) + f * math.log(vs[e]))
    return math.nan


def momentum_comparison(runs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """SGD with momentum (the first grid SGD run with β > 0) against its momentum-0 ablations: ``matched`` (the
    same effective step η/(1−β)) and ``without_momentum`` (the same nominal η), each None when not run.

    NC1 is compared at the final epoch and at the lowest training loss both the momentum run and the matched run
    reach (``loss_level``; the paper's "beyond the training loss" reading), besides the epoch average.
    """
    base = next((r for r in runs if r["role"] == "grid" and r["optimizer"] == "sgd" and r["momentum"] > 0), None)
    if base is None:
        return None

    def find(role: str) -> dict[str, Any] | None:
        return next(
            (
                r
                for r in runs
                if r["role"] == role and r["optimizer"] == "sgd" and r["weight_decay"] == base["weight_decay"]
            ),
            None,
        )

    nominal, matched = find("ablation"), find("ablation-matched")
    if nominal is None and matched is None:
        return None

    def view(r: dict[str, Any] | None) -> dict[str, Any] | None:
        if r is None:
            return None
        return {
            "label": r["label"],
            "lr": r["lr"],
            "valid": r["valid"],
            "nc1_epoch_mean": r["nc1_epoch_mean"],
            "nc3_epoch_mean": r["nc3_epoch_mean"],
            **{k: r["final"][k] for k in ("nc0", "nc1", "nc3", "train_loss", "train_acc")},
        }

    out: dict[str, Any] = {
        "with_momentum": view(base),
        "without_momentum": view(nominal),
        "matched": view(matched),
        "loss_level": math.nan,
        "nc1_at_loss": {"with_momentum": math.nan, "matched": math.nan},
    }
    traj_a, traj_b = base.get("trajectory"), None if matched is None else matched.get("trajectory")
    if traj_a and traj_b:

        def lowest(losses: Sequence[float | None]) -> float:
            return min((float(x) for x in losses if x is not None and math.isfinite(x)), default=math.inf)

        level = max(lowest(traj_a["train_loss"]), lowest(traj_b["train_loss"]))
        if math.isfinite(level):
            out["loss_level"] = level
            out["nc1_at_loss"] = {
                "with_momentum": value_at_loss(traj_a["train_loss"], traj_a["nc1"], level),
                "matched": value_at_loss(traj_b["train_loss"], traj_b["nc1"], level),
            }
    return out


def summarise(runs: Sequence[dict[str, Any]], *, valid_accuracy: float) -> dict[str, Any]:
    """``best_by_optimizer``, ``regression``, ``momentum`` and counts, for results.json."""
    return {
        "n_runs": len(runs),
        "n_valid": sum(1 for r in runs if r["valid"]),
        "valid_accuracy": valid_accuracy,
        "best_by_optimizer": best_by_optimizer(runs),
        "regression": nc3_nc0_regression(runs),
        "regression_by_nc3_form": {
            "alignment": nc3_nc0_regression(runs, key="nc3_alignment"),
            "self-duality": nc3_nc0_regression(runs, key="nc3_duality"),
        },
        "momentum": momentum_comparison(runs),
    }
