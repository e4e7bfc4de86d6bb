"""The method's section of report.md: UFM numbers, the per-optimizer table, regression and momentum."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iclr26_shared.runner import format_number

__all__ = ["report"]


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(v if isinstance(v, str) else format_number(v) for v in row) + " |" for row in rows]
    return lines


def report(results: Mapping[str, Any]) -> str:
    """Markdown body."""
    parts: list[str] = []
    u = results.get("ufm")
    if u:
        parts += ["## UFM (Theorems 3.1–3.4)", ""]
        parts += _table(
            ["simulation", "α_0 / peak", "α_T", "theory", "max rel. error"],
            [
                [
                    "SGD coupled (Thm 3.2)",
                    u["sgd"]["alpha0"],
                    u["sgd"]["alpha_final"],
                    u["sgd"]["theory_final"],
                    u["sgd"]["max_rel_error"],
                ],
                [
                    "SGDW (Thm 3.1)",
                    u["sgdw"]["alpha0"],
                    u["sgdw"]["alpha_final"],
                    u["sgdw"]["theory_final"],
                    u["sgdw"]["max_rel_error"],
                ],
                [
                    "SignGD decoupled (Thm 3.3)",
                    0.0,
                    u["signumw"]["alpha_final"],
                    u["signumw"]["limit"],
                    u["signumw"]["max_rel_error"],
                ],
                [
                    "SignGD coupled, constant η",
                    u["signum_constant"]["alpha_peak"],
                    u["signum_constant"]["alpha_tail_max"],
                    "—",
                    "—",
                ],
                [
                    "SignGD coupled, η_t → 0 (Thm 3.4)",
                    u["signum_inverse"]["alpha_peak"],
                    u["signum_inverse"]["alpha_tail_max"],
                    "→ 0",
                    "—",
                ],
            ],
        )
        parts.append("")
    best = results.get("best_by_optimizer")
    if best:
        d = results.get("data", {})
        parts += [
            f"## Final NC metrics (best-NC3 valid run per optimizer; {d.get('model', '')} on {d.get('dataset', '')})",
            "",
        ]
        parts += _table(
            ["optimizer", "run", "NC0", "NC1", "NC2", "NC3", "NC4", "train acc", "test acc"],
            [
                [o, b["label"], b["nc0"], b["nc1"], b["nc2"], b["nc3"], b["nc4"], b["train_acc"], b["test_acc"]]
                for o, b in best.items()
            ],
        )
        valid = f"{results.get('n_valid')} of {results.get('n_runs')}"
        parts += ["", f"Valid runs (final train accuracy ≥ {results.get('valid_accuracy')}): {valid}.", ""]
    runs = results.get("runs") or []
    if runs:
        parts += ["## All runs", ""]
        parts += _table(
            ["run", "role", "valid", "NC0", "NC1", "NC3", "train acc", "s"],
            [
                [
                    r["label"],
                    r["role"],
                    "yes" if r["valid"] else "no",
                    r["final"]["nc0"],
                    r["final"]["nc1"],
                    r["final"]["nc3"],
                    r["final"]["train_acc"],
                    r["seconds"],
                ]
                for r in runs
            ],
        )
        parts.append("")
    reg = results.get("regression")
    if reg and runs:
        parts += [
            "## NC3 vs log10 NC0",
            "",
            f"NC3 = {format_number(reg['intercept'])} + {format_number(reg['slope'])} · log10 NC0 "
            f"over {reg['n']} valid runs; "
            f"R² = {format_number(reg['r2'])}, p = {format_number(reg['p_value'])}.",
            "",
        ]
    mom = results.get("momentum")
    if mom:
        parts += ["## Momentum ablation (SGD)", ""]
        parts += _table(
            ["run", "epoch-mean NC1", "epoch-mean NC3", "final NC1", "final NC3", "final loss"],
            [
                [v["label"], v["nc1_epoch_mean"], v["nc3_epoch_mean"], v["nc1"], v["nc3"], v["train_loss"]]
                for v in (mom["with_momentum"], mom["without_momentum"])
            ],
        )
        parts.append("")
    return "\n".join(parts)
