"""The paper's central claims, checked on ``results.json`` of ``ego-foresight``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_rl.methods.ego_foresight.metrics import ens_details
from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = ["ENS_MARGIN", "TIE", "claims", "report"]

#: Relative difference below which two errors (or returns) count as a tie (the claim does not hold).
TIE = 0.02
#: Lead in ENS (a score in [0, 1]) below which two agents count as tied.
ENS_MARGIN = 0.02


def _return_claims(env: str, ef: Mapping[str, Any], base: Mapping[str, Any]) -> list[Claim]:
    sem = math.hypot(ef.get("final_return_sem", 0.0), base.get("final_return_sem", 0.0))
    ens = ens_details({"drqv2-ef": ef["mean_return"], "drqv2": base["mean_return"]})
    return [
        Claim(
            claim=f"DrQ-v2+EF reaches a higher return than DrQ-v2 at the same environment steps ({env})",
            metric="final evaluation return, mean over training seeds (margin: std. error of the difference, "
            "at least 2 % of the baseline)",
            ours=ef["final_return"],
            baseline=base["final_return"],
            better="higher",
            margin=max(sem, TIE * abs(base["final_return"])),
            chance=max(ef["mean_return"][0], base["mean_return"][0]),
            paper="EF > DrQ-v2 on 21/26 tasks, never worse (2.5M frames)",
        ),
        Claim(
            claim=f"DrQ-v2+EF is more sample-efficient than DrQ-v2 ({env})",
            metric="efficiency normalised score at fixed return levels both learning curves reach (ENS in "
            "[0, 1], margin 0.02; NaN when no curve learns; chance: the untrained policy's level)",
            ours=ens["ens"]["drqv2-ef"],
            baseline=ens["ens"]["drqv2"],
            better="higher",
            margin=ENS_MARGIN,
            chance=ens["chance"] if ens["defined"] else None,
            paper="higher ENS / rliable aggregates than DrQ-v2",
        ),
    ]


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """The paper's claims on one run's results.

    Return claims (only when both agents were trained, as in ``full``): (1a) DrQ-v2+EF's final return
    beats DrQ-v2's (paper §5, Fig. 4) by more than the standard error of the difference over training
    seeds and at least :data:`TIE` of the baseline's magnitude; both at or below the untrained policy's
    return (the first evaluation: the ``chance`` level) is inconclusive. (1b) EF's efficiency normalised
    score beats DrQ-v2's by :data:`ENS_MARGIN` (paper §5, Table 1), computed here from the two mean
    learning curves at fixed return levels both learning curves reach (:func:`~.metrics.ens_details`):
    NaN (inconclusive) when neither curve learns; its chance level is the untrained policy's normalised
    return, so EF at it fails and a baseline at it makes the claim inconclusive.

    Prediction claims (whenever the EF agent was trained; the claims of ``quick``), on held-out
    babbling episodes, agent region, horizons 1..H: (2a) the EF head predicts the agent's future
    appearance better than the best no-skill predictor (copy the last frame, the mean training frame, a
    frame in the agent's mean colour) and (2b) better with the true actions than with random ones
    (paper §3, Eq. 1-3: the rollout is action-conditioned). Each must win by :data:`TIE` of its
    baseline's error. (2a) is itself a test against chance (its baseline is the best blind guess, so it
    has no separate ``chance``); for (2b) the best no-skill predictor's error is the ``chance`` level: a head
    no better than the best blind guess (an action-blind blur) shows nothing about actions, whatever the
    order of true and random actions.
    """
    env = str(results.get("env", "?"))
    agents = results.get("agents", {})
    ef, base = agents.get("drqv2-ef"), agents.get("drqv2")
    out: list[Claim] = []
    if ef is not None and base is not None:
        out += _return_claims(env, ef, base)
    pred = results.get("prediction")
    if ef is None or not pred:
        return out
    blind = [pred[k] for k in ("mean_agent_mse", "colour_agent_mse") if pred.get(k) is not None]
    no_skill = min([pred["copy_agent_mse"], *blind])  # the best predictor that does not know where the agent is
    out += [
        Claim(
            claim="the EF head predicts the agent's future appearance better than copying the last frame, "
            "the mean frame or the agent's mean colour",
            metric="MSE per pixel on the agent region, horizons 1..H, vs the best no-skill predictor (margin 2 %)",
            ours=pred["ef_agent_mse"],
            baseline=no_skill,
            better="lower",
            margin=TIE * no_skill,
            paper="qualitative (predicted agent frames, paper Fig. 1/5)",
        ),
        Claim(
            claim="the EF prediction follows the given actions: true actions beat random actions",
            metric="MSE per pixel on the agent region, horizons 1..H, true vs random actions (margin 2 %)",
            ours=pred["ef_agent_mse"],
            baseline=pred["rand_agent_mse"],
            better="lower",
            margin=TIE * pred["rand_agent_mse"],
            chance=no_skill,
            paper="action-conditioned agent prediction (paper §3)",
        ),
    ]
    return out


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def report(results: Mapping[str, Any]) -> str:
    """Markdown body of report.md: per-agent returns, ENS, throughput, prediction errors."""
    lines = ["## Learning", ""]
    agents = results.get("agents", {})
    frames = results.get("frames_per_step", 1) * results.get("steps", 0)
    lines.append(
        f"Task {results.get('env')}, {results.get('steps')} agent steps ({frames} frames) per run, "
        f"training seeds {results.get('train_seeds')}."
    )
    rows = [
        [name, _fmt(a["final_return"]), ", ".join(_fmt(x) for x in a["final_return_per_seed"])]
        + [_fmt(a["mean_return_over_curve"]), _fmt(a["ens"]), _fmt(a["env_steps_per_s"]), _fmt(a["updates_per_s"])]
        for name, a in agents.items()
    ]
    head = ["agent", "final return (mean)", "per seed", "mean over curve", "ENS", "env steps/s", "updates/s"]
    lines += ["", markdown_table(head, rows)]
    pred = results.get("prediction")
    if pred:
        lines += [
            "",
            "## Ego-Foresight prediction (held-out babbling episodes)",
            "",
            "MSE per pixel: agent region (MuJoCo segmentation of the target frame) and full frame. "
            "Diagnostics: mean |EF(true) - EF(random actions)| and mean |EF - EF with another window's "
            "agent part| on the agent region (0: the decoder ignores the actions / the agent part).",
            "",
        ]
        ph = pred["per_horizon"]
        cols = ("ef_agent", "rand_agent", "copy_agent", "mean_agent", "colour_agent", "ef_full", "copy_full")
        cols += ("mean_full", "action_sens", "agent_part_sens")
        head = ["steps ahead", "EF agent", "EF random actions", "copy-last", "mean frame", "agent colour"]
        head += ["EF full", "copy-last full", "mean-frame full", "action sens.", "agent-part sens."]
        rows = [[str(k + 1), *(_fmt(ph[c][k]) if c in ph else "-" for c in cols)] for k in range(len(ph["ef_agent"]))]
        lines.append(markdown_table(head, rows))
    return "\n".join(lines) + "\n"
