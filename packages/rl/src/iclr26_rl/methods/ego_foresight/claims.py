"""The paper's central claims, checked on ``results.json`` of ``ego-foresight``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim

__all__ = ["ENS_MARGIN", "TIE", "claims", "report"]

#: Relative difference below which two errors (or returns) count as a tie (the claim does not hold).
TIE = 0.02
#: Lead in ENS (a score in [0, 1]) below which two agents count as tied.
ENS_MARGIN = 0.02


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """The paper's claims on one run's results.

    (1a) DrQ-v2+EF's final return beats DrQ-v2's (paper §5, Fig. 4: EF >= DrQ-v2 on every task) by more
    than the standard error of the difference over training seeds (and by at least :data:`TIE` of the
    baseline's magnitude); both at or below the untrained
    policy's return (the first evaluation, the ``chance`` level) is inconclusive. (1b) EF's efficiency
    normalised score beats DrQ-v2's (paper §5, Table 1); NaN (inconclusive) when no learning curve
    improved on its first evaluation; a lead below :data:`ENS_MARGIN` is a tie. (2a) The EF head predicts the agent's future appearance better
    than copying the last frame and (2b) better with the true actions than with random ones (paper §3,
    Eq. 1-3: the rollout is action-conditioned); each must win by more than :data:`TIE` (2 %) of the
    baseline's error. A claim whose agents were not trained is reported with NaN (inconclusive).
    """
    env = results.get("env", "?")
    agents = results.get("agents", {})
    ef, base = agents.get("drqv2-ef"), agents.get("drqv2")
    both = ef is not None and base is not None
    nan = math.nan
    sem = math.hypot(ef.get("final_return_sem", 0.0), base.get("final_return_sem", 0.0)) if both else 0.0
    margin = max(sem, TIE * abs(base["final_return"])) if both else 0.0
    untrained = (
        max(ef["mean_return"][0], base["mean_return"][0]) if both and "mean_return" in ef and "mean_return" in base else None
    )
    ens_defined = bool(results.get("ens_defined", True))
    out = [
        Claim(
            claim=f"DrQ-v2+EF reaches a higher return than DrQ-v2 at the same environment steps ({env})",
            metric="final evaluation return, mean over training seeds (margin: std. error of the difference, "
            "at least 2 % of the baseline)",
            ours=ef["final_return"] if both else nan,
            baseline=base["final_return"] if both else nan,
            better="higher",
            margin=margin,
            chance=untrained,
            paper="EF > DrQ-v2 on 21/26 tasks, never worse",
        ),
        Claim(
            claim=f"DrQ-v2+EF is more sample-efficient than DrQ-v2 ({env})",
            metric="efficiency normalised score (ENS in [0, 1], margin 0.02; NaN when no learning curve improved)",
            ours=ef["ens"] if both and ens_defined else nan,
            baseline=base["ens"] if both else nan,
            better="higher",
            margin=ENS_MARGIN,
            paper="higher ENS / rliable aggregates than DrQ-v2",
        ),
    ]
    pred = results.get("prediction")
    out.append(
        Claim(
            claim="the EF head predicts the agent's future appearance better than copying the last frame",
            metric="MSE per pixel on the agent region, horizons 1..H (margin 2 % of the baseline)",
            ours=pred["ef_agent_mse"] if pred else nan,
            baseline=pred["copy_agent_mse"] if pred else nan,
            better="lower",
            margin=TIE * pred["copy_agent_mse"] if pred else 0.0,
            paper="qualitative (predicted agent frames, paper Fig. 1/5)",
        ),
    )
    out.append(
        Claim(
            claim="the EF prediction follows the given actions: true actions beat random actions",
            metric="MSE per pixel on the agent region, true vs random actions (margin 2 % of the baseline)",
            ours=pred["ef_agent_mse"] if pred else nan,
            baseline=pred["rand_agent_mse"] if pred else nan,
            better="lower",
            margin=TIE * pred["rand_agent_mse"] if pred else 0.0,
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
        f"training seeds {results.get('train_seeds')}."
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
