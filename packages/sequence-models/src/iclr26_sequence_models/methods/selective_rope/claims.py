"""The paper's central claims, checked on ``results.json`` (only for the tasks a run contains)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim

__all__ = ["claims", "report"]


def _metric(results: Mapping[str, Any], task: str, position: str) -> float | None:
    runs = results.get("tasks", {}).get(task, {}).get("runs", {})
    return float(runs[position]["metric"]) if position in runs else None


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """Claims 1–4 of the issue, for each task that was run with the positions the claim compares."""
    out: list[Claim] = []
    sel = {t: _metric(results, t, "selective") for t in ("state", "copy", "mqar", "lm")}
    rope = {t: _metric(results, t, "rope") for t in ("state", "copy", "mqar", "lm")}
    nope = {t: _metric(results, t, "nope") for t in ("state", "copy", "mqar", "lm")}
    state = results.get("tasks", {}).get("state")
    if state and sel["state"] is not None and rope["state"] is not None and nope["state"] is not None:
        chance = state["runs"]["selective"]["final"]["chance"]
        s = state["settings"]
        best_base = max(rope["state"], nope["state"])
        out.append(
            Claim(
                claim=f"{s['group']} word problem, {s['num_layers']}-layer {s['layer'].upper()}, "
                f"train {s['seq_len']} / test {s['eval_len']}: Selective "
                "RoPE reaches high accuracy (>= 0.9) where RoPE and NoPE stay near chance (< chance + 0.1)",
                metric=f"token accuracy @ {s['eval_len']} (baseline: best of RoPE, NoPE)",
                ours=sel["state"],
                baseline=best_base,
                holds=sel["state"] >= 0.9 and best_base < chance + 0.1,
                paper="Sel. RoPE solves and extrapolates parity; RoPE/NoPE fail",
            )
        )
    if sel["copy"] is not None and rope["copy"] is not None:
        s = results["tasks"]["copy"]["settings"]
        out.append(
            Claim(
                claim=f"copying extrapolates further with Selective RoPE than RoPE (trained on lengths <= "
                f"{s['copy_max_len']})",
                metric="copy token accuracy averaged over lengths beyond training",
                ours=sel["copy"],
                baseline=rope["copy"],
                holds=sel["copy"] > rope["copy"],
                paper="Sel. RoPE extrapolates, RoPE does not",
            )
        )
    if sel["mqar"] is not None and nope["mqar"] is not None:
        out.append(
            Claim(
                claim="MQAR accuracy with Selective RoPE >= NoPE",
                metric="query accuracy",
                ours=sel["mqar"],
                baseline=nope["mqar"],
                holds=sel["mqar"] >= nope["mqar"],
                paper="largest MQAR gain is over NoPE",
            )
        )
    if sel["lm"] is not None and rope["lm"] is not None:
        runs = results["tasks"]["lm"]["runs"]
        layer = results["tasks"]["lm"]["settings"]["layer"].upper()
        out.append(
            Claim(
                claim=f"King James Bible bytes: {layer} + Selective RoPE bits/byte <= {layer} + RoPE at equal steps "
                f"(params {runs['selective']['params']} vs {runs['rope']['params']})",
                metric="val bits per byte (lower is better)",
                ours=sel["lm"],
                baseline=rope["lm"],
                holds=sel["lm"] <= rope["lm"],
                paper="GLA 1.3B: LAMBADA ppl 8.50 vs 8.88 (RoPE)",
            )
        )
    return out


def report(results: Mapping[str, Any]) -> str:
    """Markdown tables of every task's final metrics per position."""
    lines = ["## Results per task", ""]
    for task, data in results.get("tasks", {}).items():
        s = data["settings"]
        lines += [
            f"### {task} ({s['layer']}, {s['num_layers']} layer(s), D={s['hidden_size']}, {s['steps']} steps, "
            f"lr {s['lr']})",
            "",
            "| position | headline metric | params | train s | details |",
            "|---|---|---|---|---|",
        ]
        for pos, r in data["runs"].items():
            details = {k: v for k, v in r["final"].items() if k not in ("metric", "acc_by_position")}
            text = ", ".join(f"{k}={_fmt(v)}" for k, v in details.items())
            lines.append(f"| {pos} | {r['metric']:.4f} | {r['params']} | {r['train_seconds']:.0f} | {text} |")
        lines.append("")
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_fmt(x)}" for k, x in v.items()) + "}"
    return str(v)
