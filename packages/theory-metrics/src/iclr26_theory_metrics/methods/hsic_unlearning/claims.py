"""The paper's claims about split-half HSIC unlearning evaluation (Zhang et al., ICLR 2026), on ``results.json``.

Every OTR and F1 is a mean over ``protocol_draws`` protocol draws (the same draws for every model: common random
numbers); each claim's margin adds the half-width of its 95% Monte-Carlo interval over the draws (of the paired
difference for a comparison), so a verdict holds only beyond the protocol's own noise. Chance for F1 is the trivial
answer's level, "every target in training": F1 = 2/3 with balanced sides (not 0.5).

0. Controlled check (effect large by construction): planted in-training features collapsed towards their class
   code are told from unseen ones (F1 > 2/3 + 0.2), so a failing claim on a real model can be told from a broken
   protocol.
1. Validity first: the never-unlearned original model, trained on the forget set, must read as "in training":
   retraining's OTR exceeds the original's (by 0.3). Without it a high retrain OTR means nothing (an evaluator that
   says "out" to everything gives OTR 1 to every model).
2. Unlearning (the paper's method table, CIFAR-10 R = 10 %: Retrain OTR 87.0 %, Unroll 3.0 % at the same MIA
   ASR): retraining scores a high OTR (above 0.5 + 0.2) and a higher one than a method that only fools the MIA;
   that method does fool the loss attack (balanced accuracy on forget vs unseen within 0.05 of 0.5).
3. Discrimination (the paper's F1 table on retrained models: C10 0.87 / 0.95 / 1.00 for |S| = 400 / 1000 / 2000):
   split-half HSIC separates in-training from never-seen subsets of the retrained model (F1 above 2/3 + 0.1),
   F1 rises with the subset size, and it beats the MMD distribution-distance baseline (C10: MMD 0.70 vs SDE 0.95).
4. The test works where the MIA is at chance: on the MIA-fooled model the protocol still tells its forget subsets
   (in training) from unseen subsets (F1 above 2/3 + 0.1).
5. Ranking (the paper: the evaluation's order of the unlearning methods agrees with their distance to retraining):
   over the original and the unlearned models, the Spearman correlation of |OTR − OTR_retrain| with the
   retrain gap "Avg. Gap" (the mean absolute difference to retraining of forget, retain and test accuracy and the
   MIA; Jia et al., 2023; Fan et al., 2024) is positive (> 0.3), per protocol draw, with its MC interval. Chance
   (a ranking unrelated to the gap) is 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from iclr26_shared.runner import format_number
from iclr26_shared.spec import Claim
from iclr26_shared.verdicts import t_interval
from iclr26_theory_metrics.reporting import markdown_table
from iclr26_theory_metrics.reporting import num as _f

__all__ = ["CHANCE_F1", "claims", "report"]

#: F1 of the trivial answer "every target in training" with as many in- as out-of-training targets: 2/3.
CHANCE_F1 = 2 / 3
#: The controlled check must reach F1 > 2/3 + this (+ its MC half-width).
CONTROL_MARGIN = 0.2
#: "Well above chance": F1 > 2/3 + this (+ its MC half-width).
F1_MARGIN = 0.1
#: "Rises with |S|" / "beats MMD": the F1 gain must exceed this (+ the MC half-width of the difference).
F1_GAIN_MARGIN = 0.05
#: Retraining's OTR must beat the original's and the MIA-fooling method's by this much (the paper: 87.0 vs 3.0 %).
OTR_MARGIN = 0.3
#: Retraining's OTR must exceed 0.5 by this much.
OTR_CHANCE_MARGIN = 0.2
#: "At chance" for the MIA: balanced accuracy within this of 0.5.
MIA_TOLERANCE = 0.05
#: The ranking claim: Spearman's ρ must exceed this (+ its MC half-width).
RANK_MARGIN = 0.3
#: The quantities whose mean absolute difference to retraining is the "Avg. Gap".
GAP_KEYS = ("acc_forget", "acc_retain", "acc_test", "mia_acc")


def _spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's ρ (average ranks for ties); NaN when either side is constant or too short."""
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    import numpy as np
    from scipy.stats import rankdata

    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])  # Pearson of the average ranks


def ranking(models: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ranking claim's numbers: per protocol draw, Spearman's ρ between |OTR_m − OTR_retrain| and the Avg. Gap
    of every model m but retrain; ``None`` with fewer than 3 such models or no draws."""
    if "retrain" not in models:
        return None
    r = models["retrain"]
    names = [n for n in models if n != "retrain"]
    draws = r.get("otr_draws") or []
    if len(names) < 3 or not draws or any(len(models[n].get("otr_draws") or []) != len(draws) for n in names):
        return None
    gap = [sum(abs(_f(models[n][k]) - _f(r[k])) for k in GAP_KEYS) / len(GAP_KEYS) for n in names]
    rhos = [
        _spearman([abs(_f(models[n]["otr_draws"][d]) - _f(draws[d])) for n in names], gap) for d in range(len(draws))
    ]
    finite = [x for x in rhos if math.isfinite(x)]
    mean = sum(finite) / len(finite) if finite else math.nan
    hw = 0.0
    if len(finite) >= 2:
        lo, hi = t_interval(finite)
        hw = (hi - lo) / 2
    return {"models": names, "avg_gap": gap, "rho_draws": rhos, "rho": mean, "half_width": hw}


def _half_width(mean: Any, ci: Any) -> float:
    """The larger distance from ``mean`` to an end of its interval ``ci`` (0 when absent: results of older runs)."""
    if not ci or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return 0.0
    m, lo, hi = _f(mean), _f(ci[0]), _f(ci[1])
    hw = max(hi - m, m - lo)
    return hw if math.isfinite(hw) else 0.0


def _paired_half_width(a: Any, b: Any) -> float:
    """MC half-width of the mean of the draw-by-draw difference ``a − b`` (common random numbers pair them)."""
    if not a or not b or len(a) != len(b) or len(a) < 2:
        return 0.0
    d = [_f(x) - _f(y) for x, y in zip(a, b, strict=True)]
    lo, hi = t_interval(d)
    return (hi - lo) / 2 if math.isfinite(hi - lo) else 0.0


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """The claims of this run (sections absent from ``results`` give none)."""
    out: list[Claim] = []
    c = results.get("control")
    if c:
        out.append(
            Claim(
                claim="Controlled check: planted collapsed in-training features are told from unseen ones",
                metric=f"F1 (in training), |S| = {c['size']}, planted noise {format_number(_f(c['noise_in']))} vs 1",
                ours=_f(c["f1"]),
                threshold=CHANCE_F1,
                margin=CONTROL_MARGIN + _half_width(c["f1"], c.get("f1_ci")),
                chance=CHANCE_F1,
                paper="large by construction",
            )
        )
    models = results.get("models") or {}
    otr_metric = f"OTR of {results.get('n_targets')} forget subsets of {results.get('subset_size')} per draw"
    if "retrain" in models and "original" in models:
        r, o = models["retrain"], models["original"]
        out.append(
            Claim(
                claim="Validity: the never-unlearned original model's forget subsets read as in training (retraining's "
                "OTR exceeds the original's)",
                metric=f"{otr_metric}, retrain vs original (trained on the forget set)",
                ours=_f(r["otr"]),
                baseline=_f(o["otr"]),
                margin=OTR_MARGIN + _paired_half_width(r.get("otr_draws"), o.get("otr_draws")),
                paper="Retrain 87.0 %; a model trained on the forget set is the 0 % end",
            )
        )
    if "retrain" in models:
        r = models["retrain"]
        out.append(
            Claim(
                claim="Retraining (the gold standard) scores a high out-of-training rate on its forget set",
                metric=otr_metric,
                ours=_f(r["otr"]),
                threshold=0.5,
                margin=OTR_CHANCE_MARGIN + _half_width(r["otr"], r.get("otr_ci")),
                # the trivial level: what the evaluator gives a model that never unlearned (an evaluator that
                # calls everything "out" scores every model 1 and must not pass this claim)
                chance=_f(models["original"]["otr"]) if "original" in models else None,
                paper="Retrain 87.0 % (CIFAR-10, R = 10 %)",
            )
        )
    if "retrain" in models and "mia-fool" in models:
        r, m = models["retrain"], models["mia-fool"]
        out += [
            Claim(
                claim="Retraining scores a higher OTR than a method that only fools the MIA",
                metric=f"{otr_metric}, retrain vs mia-fool (head-only loss matching, features untouched)",
                ours=_f(r["otr"]),
                baseline=_f(m["otr"]),
                margin=OTR_MARGIN + _paired_half_width(r.get("otr_draws"), m.get("otr_draws")),
                paper="Retrain 87.0 % vs Unroll 3.0 % at the same MIA ASR (0.30)",
            ),
            Claim(
                claim="The MIA-fooling method does fool the loss attack (forget vs unseen at chance)",
                metric="|MIA balanced accuracy − 0.5| of mia-fool (forget vs unseen test images)",
                ours=abs(_f(m["mia_acc"]) - 0.5),
                threshold=MIA_TOLERANCE,
                better="lower",
                paper="Unroll MIA ASR 0.30 = Retrain 0.30",
            ),
        ]
    f1 = results.get("f1_retrain") or []
    if f1:
        small, large = f1[0], f1[-1]
        rise_hw = math.hypot(_half_width(large["f1"], large.get("f1_ci")), _half_width(small["f1"], small.get("f1_ci")))
        out += [
            Claim(
                claim="Split-half HSIC separates in-training from never-seen subsets of the retrained model (F1 well "
                "above the trivial answer's)",
                metric=f"F1 (in training), |S| = {large['size']}; trivial 'every target in training' = 2/3",
                ours=_f(large["f1"]),
                threshold=CHANCE_F1,
                margin=F1_MARGIN + _half_width(large["f1"], large.get("f1_ci")),
                chance=CHANCE_F1,
                paper="C10/ResNet-18: 0.87 (|S| 400), 0.95 (1000), 1.00 (2000); SVHN 0.71 / 0.78 / 0.97",
            ),
            Claim(
                claim="The discrimination F1 rises with the subset size",
                metric=f"F1 at |S| = {large['size']} vs |S| = {small['size']}",
                ours=_f(large["f1"]),
                baseline=_f(small["f1"]),
                margin=F1_GAIN_MARGIN + rise_hw,
                chance=CHANCE_F1,
                paper="0.87 → 0.95 → 1.00 (C10)",
            ),
            Claim(
                claim="Split-half HSIC beats the MMD distribution-distance baseline at telling in- from "
                "out-of-training subsets",
                metric=f"F1 (in training), |S| = {large['size']}: split-half HSIC vs MMD² to the references",
                ours=_f(large["f1"]),
                baseline=_f(large["f1_mmd"]),
                margin=F1_GAIN_MARGIN + _paired_half_width(large.get("f1_draws"), large.get("f1_mmd_draws")),
                chance=CHANCE_F1,
                paper="C10, R = 10 %: SDE 0.95 vs MMD 0.70 (Wasserstein 0.89)",
            ),
        ]
    rank = ranking(models)
    if rank is not None:
        out.append(
            Claim(
                claim="Ranking: the OTR orders the unlearning methods as their distance to retraining does",
                metric="Spearman ρ of |OTR − OTR_retrain| and the Avg. Gap (forget / retain / test accuracy, MIA) over "
                "the original and the unlearned models, mean over the protocol draws",
                ours=_f(rank["rho"]),
                threshold=0.0,
                margin=RANK_MARGIN + _f(rank["half_width"]),
                chance=0.0,
                paper="the evaluation agrees with the retrain-distance order",
            )
        )
    at_chance = (results.get("mia_at_chance") or {}).get("mia-fool")
    if at_chance:
        out.append(
            Claim(
                claim="The test works where the MIA is at chance: on the MIA-fooled model it still tells forget "
                "subsets (trained on) from unseen ones",
                metric=f"F1 (in training), mia-fool model, |S| = {at_chance['size']}; trivial = 2/3",
                ours=_f(at_chance["f1"]),
                threshold=CHANCE_F1,
                margin=F1_MARGIN + _half_width(at_chance["f1"], at_chance.get("f1_ci")),
                chance=CHANCE_F1,
                paper="Unroll: OTR 3.0 % (forget judged in training) at MIA ASR 0.30",
            )
        )
    return out


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    return [*markdown_table(head, rows), ""]


_MODEL_KEYS = (
    "acc_retain",
    "acc_forget",
    "acc_test",
    "mia_acc",
    "mia_member_rate",
    "otr",
    "otr_ci",
    "mean_jsd_it",
    "mean_jsd_oot",
)


def _cell(value: Any) -> Any:
    """A number, or an interval ``[lo, hi]`` as text."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(format_number(_f(v)) for v in value) + "]"
    return _f(value)


_DIAGNOSTIC_KEYS = ("auc_mean_h", "auc_placebo", "mean_h_in", "mean_h_out", "mean_h_it_ref", "mean_h_oot_ref")


def _diagnostic_table(rows: Sequence[tuple[str, Mapping[str, Any]]], first: str) -> list[str]:
    """The reference-free diagnostic of each discrimination (absent from results of older runs: no table)."""
    rows = [(name, r) for name, r in rows if "auc_mean_h" in r]
    if not rows:
        return []
    return [
        "Diagnostic, no claim: does the statistic itself separate the sides? `auc_mean_h` = P(mean H over the "
        "shuffles of an in-training target > that of an unseen target), 0.5 = no separation; `auc_placebo` = the "
        "same between subsets of the out-of-training reference pool and the unseen targets, two pools never trained "
        "on: how far a difference between two fixed pools alone moves the AUC; the mean H of the targets per side "
        "and of the single IT/OOT references the decision compares them with.",
        "",
        *_table([first, *_DIAGNOSTIC_KEYS], [[name, *(_f(r.get(k)) for k in _DIAGNOSTIC_KEYS)] for name, r in rows]),
    ]


def report(results: Mapping[str, Any]) -> str:
    """The method's section of report.md: the models table, the discrimination F1 per size, the MIA-at-chance
    setting and the controlled check."""
    parts: list[str] = []
    models = results.get("models") or {}
    if models:
        parts += [
            f"## Unlearning: {results['dataset']}, {results['model']} ({results['n_train']} training images, forget "
            f"{results['forget']} {results['n_forget']}, {results['n_test']} test)",
            "",
            f"OTR over {results.get('protocol_draws', 1)} protocol draws of {results['n_targets']} forget subsets of "
            f"{results['subset_size']} (the same draws for every model), with its 95% Monte-Carlo interval over the "
            "draws; MIA = loss-threshold attack, balanced accuracy on forget vs unseen test images (chance 0.5).",
            "",
        ]
        parts += _table(
            ["model", *_MODEL_KEYS], [[n, *(_cell(m.get(k)) for k in _MODEL_KEYS)] for n, m in models.items()]
        )
    f1 = results.get("f1_retrain") or []
    if f1:
        parts += ["## Discrimination on the retrained model (retain subsets vs never-seen forget subsets)", ""]
        keys = ("f1", "f1_ci", "accuracy", "f1_mmd", "f1_mmd_ci", "mean_jsd_gap_in", "mean_jsd_gap_out")
        parts += _table(["|S|", *keys], [[str(r["size"]), *(_cell(r.get(k)) for k in keys)] for r in f1])
        parts += _diagnostic_table([(str(r["size"]), r) for r in f1], "|S|")
    mc = results.get("mia_at_chance") or {}
    if mc:
        parts += ["## Forget subsets vs unseen subsets (where the MIA is at chance)", ""]
        keys = ("mia_acc", "f1", "f1_ci", "f1_mmd")
        parts += _table(["model", *keys], [[n, *(_cell(r.get(k)) for k in keys)] for n, r in mc.items()])
        parts += _diagnostic_table(list(mc.items()), "model")
    c = results.get("control")
    if c:
        parts += ["## Controlled check (planted features)", ""]
        parts += _table(
            ["|S|", "F1", "F1 95% MC interval", "F1 MMD"],
            [[str(c["size"]), _f(c["f1"]), _cell(c.get("f1_ci")), _f(c["f1_mmd"])]],
        )
    if not parts:
        return ""
    secs = _f(results.get("seconds"))
    if math.isfinite(secs):
        parts.append(f"Wall time {format_number(secs)} s.")
    return "\n".join(parts)
