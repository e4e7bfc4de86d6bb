"""The paper's claims about D_LR (Nam et al., ICLR 2026), checked on ``results.json``.

0. Controlled check (effect known to be large): planted features that are a noisy code of the label have a far
   lower D_LR than random features with the same least-squares read-out (≈ 0 vs ≈ 1 − √((C−1)/p): the read-out
   has an intercept, so its centred rank is C − 1), so a failing
   training claim can be told apart from a broken estimator.
1. Grokking (§5, the modular-addition rows of Table 1: D_LR 0.51 before, 0.11 after grokking): D_LR at least
   halves between memorisation (train accuracy first 100 %) and grokking (test accuracy first ≥ the grokking
   level) while the train accuracy stays 100 %; the network does grok; generalisation is delayed (test accuracy at
   memorisation far below the final one); and over the steps after memorisation D_LR falls as the test accuracy
   rises (negative correlation).
2. Lazy vs rich (the MNIST rows of Table 1: lazy 0.63, rich 0.0087): the fully trained network has a lower D_LR
   than the one trained on its last layer only, from the same initialisation, on the training and the test images.
3. Batch norm (the VGG16/CIFAR-100 rows of Table 1: 0.66 without, 0.073 with BN): a small VGG trained with
   BatchNorm ends with a lower D_LR than the same VGG without it; a second claim checks that the VGG without BN
   learned at all (test accuracy above chance), without which the comparison is with an untrained net.
4. Stress test (the paper's weight-decay and target-down-scaling experiments): over rich runs with weight decay
   or scaled targets, D_LR varies less (log10 max/min) than the most stable of the baselines (initial-kernel
   distance, ‖θ‖², NC1).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from iclr26_shared.runner import format_number
from iclr26_shared.spec import Claim
from iclr26_theory_metrics.reporting import log10_or_nan as _log10
from iclr26_theory_metrics.reporting import markdown_table
from iclr26_theory_metrics.reporting import num as _f

__all__ = ["claims", "final_point", "report"]

#: The planted rich set must sit below the planted lazy one by at least this share of the expected gap 1 − √((C−1)/p).
CONTROL_SHARE = 0.5
#: "Drops sharply": log10 D_LR must fall by at least log10 2 (D_LR at least halves; the paper: 0.51 → 0.11).
GROK_LOG_MARGIN = math.log10(2.0)
#: Test accuracy at memorisation must sit this far below the final one for "delayed generalisation".
DELAY_MARGIN = 0.2
#: D_LR must fall as the test accuracy rises after memorisation: their correlation at most this.
CORRELATION_THRESHOLD = -0.5
#: D_LR's spread over the stress runs (log10 max/min) must undercut the best baseline's by this much.
STRESS_MARGIN = 0.1
#: Accuracy above chance by this much counts as "trains".
CHANCE_TOLERANCE = 0.05
#: BatchNorm must lower D_LR by at least this much (the paper: 0.66 → 0.073).
BN_MARGIN = 0.1
#: Rich training must lower D_LR by at least this much against lazy training (the paper: 0.63 vs 0.0087).
LAZY_RICH_MARGIN = 0.1


def final_point(g: Mapping[str, Any]) -> dict[str, Any]:
    """The end of the grokking run as the claims read it: every logged quantity's median over the last
    ``final_window`` evaluations of the curve (results without the field: 1, i.e. the last row itself); ``step``
    is the first step of the window."""
    window = max(1, int(g.get("final_window", 1)))
    curve = g["curve"]
    out: dict[str, Any] = {"step": curve["step"][-window]}
    for key, values in curve.items():
        if key != "step":
            out[key] = statistics.median(_f(v) for v in values[-window:])
    return out


def _final_label(g: Mapping[str, Any]) -> str:
    """``"final"`` or ``"final (median of the last k evaluations)"`` (no per-seed numbers: texts group seeds)."""
    window = int(g.get("final_window", 1))
    return "final" if window <= 1 else f"final (median of the last {window} evaluations)"


def _grok_point(g: Mapping[str, Any]) -> Mapping[str, Any]:
    """The grokking row, or the end of training (:func:`final_point`) when the run never reached the grokking
    level (the run report says which; the claim texts do not, so that ``--seeds`` groups every seed's claim into
    one row)."""
    return g["grokked"] if g.get("grokked") else final_point(g)


def _stress_baseline(spread: Mapping[str, Any]) -> tuple[str, float]:
    """The most stable finite baseline of the stress test (lowest log10 max/min spread) and its spread; NaN when
    none is finite."""
    base = {k: _f(spread[k]) for k in ("kernel_distance", "param_norm", "nc1")}
    finite = {k: v for k, v in base.items() if math.isfinite(v)}
    if not finite:
        return "none (no finite baseline)", math.nan
    best = min(finite, key=lambda k: finite[k])
    return best, finite[best]


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """The claims of this run (sections absent from ``results`` give none)."""
    out: list[Claim] = []
    c = results.get("control")
    if c:
        out.append(
            Claim(
                claim="Controlled check: planted label-code features are far richer than random features",
                metric=f"D_LR (n = {c['n']}, p = {c['p']}, C = {c['classes']})",
                ours=_f(c["rich"]["d_lr"]),
                baseline=_f(c["lazy"]["d_lr"]),
                better="lower",
                margin=CONTROL_SHARE * _f(c["lazy_expected"]),
                paper="0 at T = T_MP; ≈ 1 − √(C/p) for isotropic random features",
            )
        )
    g = results.get("grokking")
    if g:
        mem = g.get("memorised")
        point = _grok_point(g)
        final, final_label = final_point(g), _final_label(g)
        level = _f(g["grok_accuracy"])
        # the steps of memorisation and grokking differ between seeds: they are in the run report, not in the texts
        window = int(g.get("final_window", 1))
        end = "the last step" if window <= 1 else f"the median of the last {window} evaluations"
        where = f"the grokking step ({end} if the run never groks)"
        out += [
            Claim(
                claim=f"Grokking, a + b mod {g['modulus']}: D_LR at least halves from memorisation to grokking",
                metric=f"log10 D_LR (train) at {where} vs at memorisation (train accuracy first 100 %)",
                ours=_log10(point["d_lr"]),
                baseline=_log10(mem["d_lr"]) if mem else math.nan,
                better="lower",
                margin=GROK_LOG_MARGIN,
                paper="0.51 (step 200, test 5.2 %) → 0.11 (step 3000, test 99.8 %)",
            ),
            Claim(
                claim="Grokking: the train accuracy is already 100 % when D_LR drops (non-inferiority: every "
                "training pair right, within half a pair)",
                metric=f"train accuracy at {where}",
                ours=_f(point["train_acc"]),
                threshold=1.0,
                better="higher",
                margin=-0.5 / max(int(g["n_train"]), 1),
                paper="100 %",
            ),
            Claim(
                claim=f"Grokking: the transformer groks (test accuracy ≥ {format_number(level)})",
                metric=f"{final_label} test accuracy",
                ours=_f(final["test_acc"]),
                threshold=level,
                better="higher",
                paper="99.8 %",
            ),
            Claim(
                claim="Grokking: generalisation is delayed (test accuracy at memorisation far below the final)",
                metric=f"test accuracy at memorisation (train accuracy first 100 %) vs {final_label}",
                ours=_f(mem["test_acc"]) if mem else math.nan,
                baseline=_f(final["test_acc"]),
                better="lower",
                margin=DELAY_MARGIN,
                paper="5.2 % at step 200 vs 99.8 %",
            ),
            Claim(
                claim="Grokking: after memorisation D_LR falls as the test accuracy rises",
                metric="correlation of D_LR and test accuracy over the steps after memorisation",
                ours=_f(g["corr_d_lr_test_acc_after_memorisation"]),
                threshold=CORRELATION_THRESHOLD,
                better="lower",
                paper="D_LR drops across the transition",
            ),
        ]
    lr = results.get("lazy_rich")
    if lr:
        for key, split in (("d_lr", "training"), ("d_lr_test", "test")):
            out.append(
                Claim(
                    claim=f"Lazy (last layer only) vs rich (full) training on {lr['dataset']}: rich has the lower D_LR "
                    f"({split} images)",
                    metric=f"final D_LR ({split} features), rich vs lazy",
                    ours=_f(lr["rich"]["final"][key]),
                    baseline=_f(lr["lazy"]["final"][key]),
                    better="lower",
                    margin=LAZY_RICH_MARGIN,
                    paper="MNIST: rich 0.0087 vs lazy 0.63",
                )
            )
        st = lr.get("stress")
        if st:
            spread = st["spread"]
            settings = ", ".join(r["label"] for r in st["runs"])
            out.append(
                Claim(
                    claim="Stress test: D_LR stays stable under weight decay / target scaling where the baselines "
                    "do not (spread below the most stable baseline)",
                    metric=f"log10(max/min) over {settings}; baseline: the most stable of kernel distance, ‖θ‖², NC1",
                    ours=_f(spread["d_lr"]),
                    baseline=_stress_baseline(spread)[1],
                    better="lower",
                    margin=STRESS_MARGIN,
                    paper="D_LR stable; S_init, ‖θ‖², NC1 change",
                )
            )
    bn = results.get("batch_norm")
    if bn:
        out.append(
            Claim(
                claim=f"Batch norm lowers D_LR in a small VGG on {bn['dataset']}",
                metric=f"final D_LR (training features), with vs without BatchNorm ({bn['epochs']} epochs)",
                ours=_f(bn["with"]["final"]["d_lr"]),
                baseline=_f(bn["without"]["final"]["d_lr"]),
                better="lower",
                margin=BN_MARGIN,
                paper="CIFAR-100, VGG16: 0.073 with BN vs 0.66 without",
            ),
        )
        # precondition: the comparison means something only if the net without BN learned at all
        out.append(
            Claim(
                claim="Batch norm: the VGG without BN trains (test accuracy above chance)",
                metric="final test accuracy without BatchNorm",
                ours=_f(bn["without"]["final"]["test_acc"]),
                threshold=_f(bn["chance"]) + CHANCE_TOLERANCE,
                better="higher",
                paper="21.7 % (CIFAR-100, chance 1 %)",
            )
        )
    return out


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A markdown table (floats through ``format_number``, everything else as text) and a blank line."""
    return [*markdown_table(header, [[v if isinstance(v, float) else str(v) for v in row] for row in rows]), ""]


_KEYS = ("train_acc", "test_acc", "d_lr", "d_lr_test", "kernel_distance", "param_norm", "nc1")


def report(results: Mapping[str, Any]) -> str:
    """The method's section of report.md: the control, the grokking landmarks and curve, lazy vs rich."""
    parts: list[str] = []
    c = results.get("control")
    if c:
        parts += ["## Controlled check (planted features)", ""]
        parts += _table(
            ["features", "D_LR", "read-out train acc"],
            [[name, _f(c[name]["d_lr"]), _f(c[name]["train_acc"])] for name in ("rich", "lazy")],
        )
        parts += [
            "Random isotropic features with the least-squares read-out (with an intercept: centred rank C − 1): "
            f"D_LR ≈ 1 − √((C−1)/p) = {format_number(_f(c['lazy_expected']))}.",
            "",
        ]
    g = results.get("grokking")
    if g:
        parts += [
            f"## Grokking: a + b mod {g['modulus']} ({g['n_train']} training / {g['n_test']} test pairs, "
            f"{g['steps']} full-batch AdamW steps, {format_number(_f(g['seconds']))} s)",
            "",
        ]
        if g.get("random_level") is not None:
            parts += [
                f"Range: isotropic random features of this width already score D_LR ≈ 1 − √((P−1)/p) = "
                f"{format_number(_f(g['random_level']))} (P − 1 centred outputs in p dimensions), so the contrast "
                "'aligned vs isotropic random' spans only 0 … that level here, not 0 … 1; D_LR above it means "
                "features concentrated off the outputs' span (anisotropic), as at initialisation.",
                "",
            ]
        rows = []
        points: list[tuple[str, Mapping[str, Any] | None]] = [(n, g.get(n)) for n in ("init", "memorised", "grokked")]
        points.append(("final", g.get("final")))
        window = int(g.get("final_window", 1))
        if window > 1:
            points.append((f"median of the last {window}", final_point(g)))
        for name, r in points:
            rows.append(
                [name, "—"] + ["—"] * len(_KEYS) if r is None else [name, r["step"], *(_f(r[k]) for k in _KEYS)]
            )
        parts += _table(["point", "step", *_KEYS], rows)
        if window > 1:
            parts += [
                f"The claims read the end of training as the median over the last {window} evaluations (from step "
                f"{final_point(g)['step']}; `final_window`), so that one loss spike at the last evaluation does not "
                "decide them; the `final` row is the last evaluation alone.",
                "",
            ]
        if not g.get("grokked"):
            parts += [
                f"Never reached the grokking level (test accuracy {format_number(_f(g['grok_accuracy']))}): the "
                f"grokking claims use the end of training ({_final_label(g)}).",
                "",
            ]
        drop = g.get("largest_drop_after_memorisation")
        if drop:
            parts += [
                f"Largest drop of D_LR between evaluations after memorisation: {format_number(_f(drop['drop']))} "
                f"(ending at step {drop['step']}).",
                "",
            ]
        curve = g["curve"]
        parts += ["Curve (every evaluation):", ""]
        parts += _table(
            ["step", "train acc", "test acc", "D_LR", "D_LR test", "kernel dist.", "‖θ‖²", "NC1"],
            [[s, *(_f(curve[k][i]) for k in _KEYS)] for i, s in enumerate(curve["step"])],
        )
    lr = results.get("lazy_rich")
    if lr:
        parts += [
            f"## Lazy vs rich: {lr['dataset']} ({lr['n_train']} training / {lr['n_test']} test images, MLP p = "
            f"{lr['feature_dim']})",
            "",
        ]
        parts += _table(
            ["regime", *_KEYS],
            [[name, *(_f(lr[name]["final"][k]) for k in _KEYS)] for name in ("lazy", "rich")],
        )
        st = lr.get("stress")
        if st:
            parts += ["## Stress test (rich runs)", ""]
            parts += _table(["run", *_KEYS], [[r["label"], *(_f(r["final"][k]) for k in _KEYS)] for r in st["runs"]])
            parts += _table(["spread log10(max/min)", *st["spread"]], [["", *(_f(v) for v in st["spread"].values())]])
            parts += [f"Most stable baseline (the stress claim's reference): {_stress_baseline(st['spread'])[0]}.", ""]
    bn = results.get("batch_norm")
    if bn:
        parts += [f"## Batch norm: VGG (p = {bn['feature_dim']}) on {bn['dataset']}, {bn['epochs']} epochs", ""]
        parts += _table(
            ["VGG", *_KEYS], [[name, *(_f(bn[name]["final"][k]) for k in _KEYS)] for name in ("without", "with")]
        )
    return "\n".join(parts)
