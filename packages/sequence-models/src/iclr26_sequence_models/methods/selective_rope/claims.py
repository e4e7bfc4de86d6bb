"""The central claims of Selective RoPE (Movahedi et al., ICLR 2026, arXiv 2511.17388, experiments on state
tracking, copying, MQAR and language modelling), checked on ``results.json`` (only for the tasks a run contains)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_sequence_models.methods.selective_rope.config import budget_shortfall
from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = [
    "COPY_MARGIN",
    "LM_GAIN_HOSTS",
    "LM_MARGIN",
    "LM_NONINF_MARGIN",
    "MQAR_MARGIN",
    "SOLVED",
    "claims",
    "lm_trivial_bpb",
    "report",
    "solved",
]


#: Tolerance added to a task's chance level: a side within it of chance has learned nothing measurable.
CHANCE_TOLERANCE = 0.02
#: State tracking: a run *solves* the word problem when its test token accuracy at the test length (of the
#: best-validation checkpoint) reaches this, the official harness's stopping level (``max_val_acc`` 0.99).
#: The paper's claim is about solving, so it is counted per seed: a mean accuracy over seeds mixes solved
#: runs (~1.0) with failed ones (~0.5, chance) into a number that says neither.
SOLVED = 0.99
#: Copying: token accuracy by which Selective RoPE must beat the best baseline. The quick evaluation scores
#: 64 strings per length over 4 lengths beyond training; the 3-seed spread of the best baseline was 0.004 and of
#: Selective RoPE 0.013 (README), so 0.02 is about one seed standard deviation above a tie.
COPY_MARGIN = 0.02
#: MQAR: query accuracy by which Selective RoPE must beat the best baseline. The quick evaluation scores
#: 512 sequences x 4 queries: the binomial standard error at accuracy 0.5 is sqrt(0.25 / 2048) = 0.011; 0.02 is
#: about two of them.
MQAR_MARGIN = 0.02
#: Language modelling, gain claim (FoX and GDN hosts, where the paper reports one): bits/byte by which
#: Selective RoPE must be lower than RoPE. At quick scale the 3-seed standard deviation of either arm was 0.03
#: bits/byte (README), so a single run must gain at least a third of it; the replicated verdict judges the
#: rest with the interval over seeds.
LM_MARGIN = 0.01
#: Language modelling, non-inferiority claim (GLA and attention hosts; the paper's GLA-370M result is a tie,
#: LAMBADA ppl 16.33 vs 16.32 with RoPE): Selective RoPE may be *worse* than RoPE by less than this many
#: bits/byte. Chosen as the smallest gain the paper reports for Selective RoPE at 370M, as a share of the loss
#: (FoX: LAMBADA ppl 17.71 -> 17.29, ln(17.71 / 17.29) / ln 17.71 = 0.84 % of the log-perplexity; GDN 1.9 %,
#: GLA 1.3B 2.0 %), applied to the long preset's level (~1.7 bits/byte): 0.84 % x 1.7 = 0.014, rounded to
#: 0.015. A deficit below the smallest effect the paper calls a gain is a tie. Fixed before the long runs.
LM_NONINF_MARGIN = 0.015
#: Hosts on which the paper reports a language-modelling *gain* of Selective RoPE over RoPE (370M, 10B
#: tokens: FoX 17.29 vs 17.71, GDN 15.93 vs 16.79 LAMBADA ppl); on the others (GLA 370M: a tie; softmax
#: attention: no LM result) the claim is non-inferiority.
LM_GAIN_HOSTS = ("fox", "gdn")


def _metric(results: Mapping[str, Any], task: str, position: str) -> float | None:
    runs = results.get("tasks", {}).get(task, {}).get("runs", {})
    return float(runs[position]["metric"]) if position in runs else None


def _final(results: Mapping[str, Any], task: str, key: str) -> float | None:
    """``final[key]`` of the task's Selective RoPE run (the chance level every position shares)."""
    final = results["tasks"][task]["runs"]["selective"]["final"]
    return float(final[key]) if key in final else None


def _plus(value: float | None, tol: float) -> float | None:
    return None if value is None else value + tol


def lm_trivial_bpb(final: Mapping[str, Any]) -> float | None:
    """The trivial level of the LM's bits/byte: the better (lower) of the unigram and the order-1 Markov
    (bigram) byte models fitted on the training books (``final``'s ``unigram_bpb`` / ``bigram_bpb``; results
    written before the bigram level was recorded have only the unigram)."""
    levels = [float(final[k]) for k in ("unigram_bpb", "bigram_bpb") if k in final]
    return min(levels) if levels else None


def _undecided(task: str, settings: Mapping[str, Any]) -> str:
    """`` [cannot decide at this budget: ...]`` when the run's settings are below :data:`LONG_BUDGET` for
    ``task`` (quick, smoke), else ``""``: the claim's text says where its preset cannot decide it."""
    short = budget_shortfall(task, settings)
    return f" [this budget cannot decide it ({', '.join(short)}): see --preset long]" if short else ""


def solved(accuracy: float) -> float:
    """1.0 when a state-tracking run solved the task (test accuracy >= :data:`SOLVED`), else 0.0 (NaN stays
    NaN). Per seed the claims compare these indicators; over seeds their mean is the success rate."""
    return accuracy if math.isnan(accuracy) else float(accuracy >= SOLVED)


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """The paper's claims, for each task that ran with the positions it compares; every claim against
    "the baselines" compares with the best of RoPE and NoPE."""
    out: list[Claim] = []
    sel = {t: _metric(results, t, "selective") for t in ("state", "copy", "mqar", "lm")}
    rope = {t: _metric(results, t, "rope") for t in ("state", "copy", "mqar", "lm")}
    nope = {t: _metric(results, t, "nope") for t in ("state", "copy", "mqar", "lm")}
    tasks = results.get("tasks", {})
    if sel["state"] is not None and rope["state"] is not None and nope["state"] is not None:
        s = tasks["state"]["settings"]
        where = (
            f"{s['group']} word problem, {s['num_layers']}-layer {s['layer'].upper()}, "
            f"train {s['seq_len']} / test {s['eval_len']}"
        )
        where += _undecided("state", s)
        metric = f"solved (1) or not (0): token accuracy @ {s['eval_len']} >= {SOLVED} (over seeds: success rate)"
        paper = "Sel. RoPE solves and extrapolates parity; RoPE/NoPE fail (state-tracking experiments)"
        out += [
            Claim(
                claim=f"{where}: Selective RoPE solves the task (>= {SOLVED} at the test length) in more seeds "
                "than the best of RoPE and NoPE",
                metric=f"{metric} (baseline: best of RoPE, NoPE)",
                ours=solved(sel["state"]),
                baseline=max(solved(rope["state"]), solved(nope["state"])),
                better="higher",
                paper=paper,
            ),
            Claim(
                claim=f"{where}: Selective RoPE solves the task (>= {SOLVED} at the test length) in most seeds",
                metric=metric,
                ours=solved(sel["state"]),
                threshold=0.5,
                better="higher",
                paper=paper,
            ),
        ]
    if sel["copy"] is not None and rope["copy"] is not None and nope["copy"] is not None:
        s = tasks["copy"]["settings"]
        out.append(
            Claim(
                claim="copying extrapolates further with Selective RoPE than with the best of RoPE and NoPE "
                f"(trained on lengths <= {s['copy_max_len']}; by >= {COPY_MARGIN} token accuracy)"
                + _undecided("copy", s),
                metric="copy token accuracy averaged over lengths beyond training (baseline: best of RoPE, NoPE)",
                ours=sel["copy"],
                baseline=max(rope["copy"], nope["copy"]),
                better="higher",
                margin=COPY_MARGIN,
                chance=_plus(_final(results, "copy", "chance"), CHANCE_TOLERANCE),
                paper="Sel. RoPE extrapolates, RoPE does not (copying experiments)",
            )
        )
    if sel["mqar"] is not None and rope["mqar"] is not None and nope["mqar"] is not None:
        out.append(
            Claim(
                claim=f"MQAR: Selective RoPE recalls better than the best of RoPE and NoPE (by >= {MQAR_MARGIN})",
                metric="query accuracy (baseline: best of RoPE, NoPE)",
                ours=sel["mqar"],
                baseline=max(rope["mqar"], nope["mqar"]),
                better="higher",
                margin=MQAR_MARGIN,
                chance=_plus(_final(results, "mqar", "chance"), CHANCE_TOLERANCE),
                paper="largest MQAR gain is over NoPE (MQAR experiments)",
            )
        )
    if sel["lm"] is not None and rope["lm"] is not None:
        runs = tasks["lm"]["runs"]
        s = tasks["lm"]["settings"]
        layer = str(s["layer"]).upper()
        params = f"params {runs['selective']['params']} vs {runs['rope']['params']}"
        trivial = lm_trivial_bpb(runs["selective"]["final"])
        if s["layer"] in LM_GAIN_HOSTS:
            claim = (
                f"King James Bible bytes: {layer} + Selective RoPE has lower bits/byte than {layer} + RoPE "
                f"by >= {LM_MARGIN} at equal steps ({params})"
            )
            margin = LM_MARGIN
            paper = "370M / 10B tokens, LAMBADA ppl: FoX 17.29 vs 17.71 (RoPE), GDN 15.93 vs 16.79"
        else:
            claim = (
                f"King James Bible bytes: {layer} + Selective RoPE is not worse than {layer} + RoPE by "
                f"{LM_NONINF_MARGIN} bits/byte or more at equal steps (non-inferiority; {params})"
            )
            margin = -LM_NONINF_MARGIN
            paper = "GLA 370M / 10B tokens: LAMBADA ppl 16.33 vs 16.32 (RoPE), a tie (language-modelling table)"
        out.append(
            Claim(
                claim=claim + _undecided("lm", s),
                metric="val bits per byte (lower is better; trivial level: the better of the unigram and bigram "
                "byte models)",
                ours=sel["lm"],
                baseline=rope["lm"],
                better="lower",
                margin=margin,
                chance=trivial,
                paper=paper,
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
        ]
        rows = []
        for pos, r in data["runs"].items():
            details = {k: v for k, v in r["final"].items() if k not in ("metric", "acc_by_position")}
            if "sweep" in r:
                details = {"lr": r["lr"], **r["variant"], **details}
            if "best_step" in r:  # select_best: the test metrics are the best-validation checkpoint's
                details = {"best step": r["best_step"], "steps run": r["steps_run"], **details}
            text = ", ".join(f"{k}={_fmt(v)}" for k, v in details.items())
            rows.append([pos, f"{r['metric']:.4f}", r["params"], f"{r['train_seconds']:.0f}", text])
        lines += [markdown_table(["position", "headline metric", "params", "train s", "details"], rows), ""]
        swept = {pos: r["sweep"] for pos, r in data["runs"].items() if "sweep" in r}
        if swept:
            sweep_rows = [
                [
                    pos,
                    f"{c['lr']:g}",
                    ", ".join(f"{k}={v}" for k, v in c["variant"].items()) or "-",
                    f"{c['val_metric']:.4f}",
                    f"{c['metric']:.4f}",
                ]
                for pos, sweep in swept.items()
                for c in sweep
            ]
            lines += [
                "Sweep (the run with the best validation metric is reported above):",
                "",
                markdown_table(["position", "lr", "switches", "validation metric", "test metric"], sweep_rows),
                "",
            ]
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_fmt(x)}" for k, x in v.items()) + "}"
    return str(v)
