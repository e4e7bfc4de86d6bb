"""The paper's central claims, checked on ``results.json`` of ``ego-foresight``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim

__all__ = ["TIE", "claims", "report"]

#: Relative difference below which two prediction errors count as a tie (the claim does not hold).
TIE = 0.02


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """(1a) EF's final return > DrQ-v2's; (1b) EF's ENS > DrQ-v2's; (2a) EF beats copy-last-frame and
    (2b) EF with the true actions beats EF with random actions on the agent region.

    A claim whose agents were not trained (``--agent drqv2`` or ``drqv2-ef`` alone) is reported with
    NaN and ``holds=False`` so the table says it was not measured. Noise does not count: (1a) needs
    a gap larger than the standard error of the difference over seeds, (1b) needs a learning curve
    that improves at all, (2a)/(2b) need errors lower by more than :data:`TIE` (2 %).
    """
    env = results.get("env", "?")
    agents = results.get("agents", {})
    ef, base = agents.get("drqv2-ef"), agents.get("drqv2")
    both = ef is not None and base is not None
    nan = math.nan
    margin = math.hypot(ef.get("final_return_sem", 0.0), base.get("final_return_sem", 0.0)) if both else 0.0
    ens_defined = bool(results.get("ens_defined", True))
    out = [
        Claim(
            claim=f"DrQ-v2+EF reaches a higher return than DrQ-v2 at the same environment steps ({env})"
            + ("" if both else " [not measured: train both agents]"),
            metric="final evaluation return, mean over seeds (must exceed by > the std. error of the difference)",
            ours=ef["final_return"] if both else nan,
            baseline=base["final_return"] if both else None,
            holds=bool(both and ef["final_return"] - base["final_return"] > margin),
            paper="EF > DrQ-v2 on 21/26 tasks, never worse",
        ),
        Claim(
            claim=f"DrQ-v2+EF is more sample-efficient than DrQ-v2 ({env})"
            + ("" if both else " [not measured]")
            + ("" if ens_defined else " [undefined: no learning curve improved on its first evaluation]"),
            metric="efficiency normalised score (ENS)",
            ours=ef["ens"] if both else nan,
            baseline=base["ens"] if both else None,
            holds=bool(both and ens_defined and ef["ens"] > base["ens"]),
            paper="higher ENS / rliable aggregates than DrQ-v2",
        ),
    ]
    pred = results.get("prediction")
    out.append(
        Claim(
            claim="the EF head predicts the agent's future appearance better than copying the last frame"
            + ("" if pred else " [not measured: train drqv2-ef]"),
            metric="MSE per pixel on the agent region, horizons 1..H (lower by > 2 %)",
            ours=pred["ef_agent_mse"] if pred else nan,
            baseline=pred["copy_agent_mse"] if pred else None,
            holds=bool(pred and pred["ef_agent_mse"] < (1 - TIE) * pred["copy_agent_mse"]),
            paper="qualitative (predicted agent frames, paper Fig. 1/5)",
        ),
    )
    out.append(
        Claim(
            claim="the EF prediction follows the given actions: true actions beat random actions"
            + ("" if pred else " [not measured: train drqv2-ef]"),
            metric="MSE per pixel on the agent region, true vs random actions (lower by > 2 %)",
            ours=pred["ef_agent_mse"] if pred else nan,
            baseline=pred["rand_agent_mse"] if pred else None,
            holds=bool(pred and pred["ef_agent_mse"] < (1 - TIE) * pred["rand_agent_mse"]),
            paper="action-conditioned agent prediction (paper §3)",
        ),
    )
    return out


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def report(results: Mapping[str, Any]) -> str:
    """Markdown body of report.md: per-agent returns, ENS, throughput, prediction errors."""
    lines = ["## Learning", ""]
    agents = results.get("agents", {})
    frames = results.get("frames_per_step", 1) * results.get("steps", 0)
    lines.append(
        f"Task {results.get('env')}, {results.get('steps')} agent steps ({frames} frames) per run, "
        f"seeds {results.get('seeds')}."
    )
    lines += [
        "",
        "| agent | final return (mean) | per seed | mean over curve | ENS | env steps/s | updates/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, a in agents.items():
        per_seed = ", ".join(_fmt(x) for x in a["final_return_per_seed"])
        lines.append(
            f"| {name} | {_fmt(a['final_return'])} | {per_seed} | {_fmt(a['mean_return_over_curve'])} | "
            f"{_fmt(a['ens'])} | {_fmt(a['env_steps_per_s'])} | {_fmt(a['updates_per_s'])} |"
        )
    pred = results.get("prediction")
    if pred:
        lines += [
            "",
            "## Ego-Foresight prediction (held-out babbling episodes)",
            "",
            "| steps ahead | EF agent MSE | EF random-action agent MSE | copy-last agent MSE "
            "| EF full MSE | copy-last full MSE |",
            "|---|---|---|---|---|---|",
        ]
        ph = pred["per_horizon"]
        for k in range(len(ph["ef_agent"])):
            lines.append(
                f"| {k + 1} | {_fmt(ph['ef_agent'][k])} | {_fmt(ph['rand_agent'][k])} | {_fmt(ph['copy_agent'][k])} | "
                f"{_fmt(ph['ef_full'][k])} | {_fmt(ph['copy_full'][k])} |"
            )
    return "\n".join(lines) + "\n"
