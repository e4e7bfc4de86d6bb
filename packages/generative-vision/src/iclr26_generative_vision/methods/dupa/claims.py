"""The paper's central claims of DUPA, checked on ``results.json``, and the report tables.

* Ablation table (DUPA-L/2, 400K iterations: DDT 14.9 → + dual-path 12.5 → + alignment 11.1 FID): at equal
  training steps DDT + DUPA reaches a better FID-style score than DDT alone, and the dual-path-only
  ablation sits between (two claims: dual-path beats DDT, DUPA beats dual-path);
* "5× training speedup": DUPA reaches the baseline's final score in fewer steps (the ratio of steps; must
  exceed 1 by at least one evaluation interval's worth, ``SPEEDUP_MARGIN``);
* encoder sharing (DDT's sampler): recomputing the condition every k steps keeps the score within
  ``MAX_SHARING_FD_RATIO`` of no sharing and cuts sampling time (a wall-time claim);
* controlled check (a large, known effect that tells a failing claim from a bug): training with L_DUPA
  raises the held-out cosine of the projected conditions of two noisy paths of the same image above its
  value at initialisation by at least ``CONTROL_MARGIN`` (the loss is optimised, its gradient flows);
* no collapse (the paper's reason for a non-zero projector init): after training, two paths of the *same*
  image are more aligned than two *different* images by at least ``CONTROL_MARGIN``.

Chance levels: the FD of clamped Gaussian noise (both sides at or above it: inconclusive).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_generative_vision.methods._format import fmt
from iclr26_shared.spec import Claim

__all__ = ["CONTROL_MARGIN", "MAX_SHARING_FD_RATIO", "SPEEDUP_MARGIN", "claims", "report"]

#: "A small quality cost": FD with sharing at most 15% above FD without.
MAX_SHARING_FD_RATIO = 1.15
#: The speed-up (steps of the baseline / steps of DUPA to the same score) must exceed 1 by this much.
SPEEDUP_MARGIN = 0.1
#: Cosine gain that counts as "aligned" (trained vs init) and as "not collapsed" (same vs other image).
CONTROL_MARGIN = 0.1


def _final_fd(results: Mapping[str, Any], variant: str) -> float:
    row = results.get("final", {}).get(variant)
    return float(row["fd"]) if row else math.nan


#: The FD claims of the ablation table, in order: (claim, metric, ours' variant, baseline's variant, paper).
_FD_CLAIMS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "At equal training steps, DDT + DUPA reaches a better FID-style score than DDT alone",
        "FD (in-repo CNN features), DUPA vs DDT",
        "dupa",
        "ddt",
        "ablation (L/2, 400K it.): FID 11.1 vs 14.9",
    ),
    (
        "Dual-path sampling alone (no alignment) already beats DDT at equal steps",
        "FD, dual-path vs DDT",
        "dual-path",
        "ddt",
        "ablation: 12.5 vs 14.9",
    ),
    (
        "Adding the condition alignment beats dual-path sampling alone (the ablation's order)",
        "FD, DUPA vs dual-path",
        "dupa",
        "dual-path",
        "ablation: 11.1 vs 12.5",
    ),
)

#: The cosine claims, in order: (claim, metric, baseline's source, baseline's key, paper). Ours is always
#: DUPA's trained held-out same-image projected cosine; "init" is ``alignment_init``, "dupa" the trained model.
_COSINE_CLAIMS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "Controlled check: training with L_DUPA aligns the projected conditions of two noisy paths",
        "same-image projected cosine across paths (held-out), trained vs initial DUPA model",
        "init",
        "same_projected",
        "L_DUPA = −mean cos (the term the method minimises)",
    ),
    (
        "With a non-zero projector init the alignment does not collapse (same image > other images)",
        "projected cosine, same image vs different images (held-out)",
        "dupa",
        "other_projected",
        "zero init collapses to a trivial solution; Kaiming + small-gain Xavier does not",
    ),
)


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """The claims that ``results`` can measure (a variant that was not trained gives no row)."""
    chance = results.get("fd_noise")
    steps = results.get("train_steps")
    final = results.get("final", {})
    out: list[Claim] = [
        Claim(
            claim=text,
            metric=metric,
            ours=_final_fd(results, ours),
            baseline=_final_fd(results, base),
            better="lower",
            chance=chance,
            paper=paper,
        )
        for text, metric, ours, base, paper in _FD_CLAIMS
        # the DUPA-vs-DDT claim always; the two dual-path rows only when that variant was trained
        if "dual-path" in final or "dual-path" not in (ours, base)
    ]
    conv = results.get("convergence")
    if conv:
        out.append(
            Claim(
                claim="DUPA reaches the DDT baseline's final FID-style score in fewer training steps",
                metric="speed-up: baseline steps / DUPA steps to the same score (0: never reached)",
                ours=float(conv["speedup"]),
                threshold=1.0,
                better="higher",
                margin=SPEEDUP_MARGIN,
                paper=f"5× (same FID at 1/5 of the iterations); here over {steps} steps",
            )
        )
    sharing = {int(r["refresh_rate"]): r for r in results.get("sharing", [])}
    k = results.get("shared_refresh_rate") or max(sharing, default=1)
    if 1 in sharing and k in sharing and k != 1:
        out += [
            Claim(
                claim=f"Encoder sharing (refresh every {k} steps) costs only a small loss of quality",
                metric=f"FD(k={k}) / FD(k=1), DUPA",
                ours=float(sharing[k]["fd"]) / float(sharing[1]["fd"]),
                threshold=MAX_SHARING_FD_RATIO,
                better="lower",
                paper="DDT: FID nearly unchanged with sharing",
            ),
            Claim(
                claim=f"Encoder sharing (refresh every {k} steps) cuts sampling time",
                metric=f"sampling seconds, k={k} / k=1",
                ours=float(sharing[k]["seconds"]) / float(sharing[1]["seconds"]),
                threshold=1.0,
                better="lower",
                paper="DDT: faster sampling with a shared condition",
                timing=True,
            ),
        ]
    align = results.get("alignment", {}).get("dupa", {})
    sources = {"init": results.get("alignment_init", {}), "dupa": align}
    out += [
        Claim(
            claim=text,
            metric=metric,
            ours=float(align["same_projected"]),
            baseline=float(sources[src][key]),
            better="higher",
            margin=CONTROL_MARGIN,
            paper=paper,
        )
        for text, metric, src, key, paper in _COSINE_CLAIMS
        if "same_projected" in align and "same_projected" in sources[src]
    ]
    return out


def report(results: Mapping[str, Any]) -> str:
    """Markdown tables: final scores, FD curves, encoder sharing, path cosines (report.md)."""
    lines = [
        f"## {results['dataset']} ({results['num_train']} training images, {results['image_size']}×"
        f"{results['image_size']}), backbone {results['arch']}, {results['train_steps']} steps",
        "",
        f"Evaluation CNN test accuracy {fmt(results['classifier_test_accuracy'])}; FD(test vs train) = "
        f"{fmt(results['fd_test_vs_train'])} (floor); FD of clamped noise = {fmt(results['fd_noise'])} (chance). "
        "FD is on in-repo classifier features, not Inception FID.",
        "",
        "| variant | FD ↓ | class accuracy ↑ | FD with CFG ↓ | accuracy with CFG ↑ |",
        "|---|---|---|---|---|",
    ]
    for v, r in results["final"].items():
        c = r.get("cfg", {})
        lines.append(
            f"| {v} | {fmt(r['fd'])} | {fmt(r['class_accuracy'])} | {fmt(c.get('fd'))} "
            f"| {fmt(c.get('class_accuracy'))} |"
        )
    curves = results.get("curves", {})
    if curves:
        steps = [r["step"] for r in next(iter(curves.values()))]
        lines += ["", "### FD vs training step (intermediate evaluations)", ""]
        lines += ["| step | " + " | ".join(curves) + " |", "|---" * (len(curves) + 1) + "|"]
        for i, s in enumerate(steps):
            lines.append(f"| {s} | " + " | ".join(fmt(rows[i]["fd"]) for rows in curves.values()) + " |")
        conv = results.get("convergence", {})
        lines += [
            "",
            f"DUPA reaches DDT's final curve FD ({fmt(conv.get('ddt_final_curve_fd'))}) at step "
            f"{fmt(conv.get('dupa_steps_to_ddt_final'))}: speed-up {fmt(conv.get('speedup'))}.",
        ]
    if results.get("sharing"):
        lines += [
            "",
            "### Encoder sharing (DUPA model)",
            "",
            "| refresh every k | FD ↓ | FD / FD(k=1) | accuracy | block evals / sample | time / time(k=1) |",
            "|---|---|---|---|---|---|",
        ]
        for r in results["sharing"]:
            lines.append(
                f"| {r['refresh_rate']} | {fmt(r['fd'])} | {fmt(r['fd_ratio'])} | {fmt(r['class_accuracy'])} "
                f"| {r['block_evals_per_sample']} | {fmt(r['time_ratio'])} |"
            )
    if results.get("alignment"):
        lines += [
            "",
            "### Cross-path cosine of the aligned layer (held-out images)",
            "",
            "| variant | same image, raw | other image, raw | same image, projected | other image, projected |",
            "|---|---|---|---|---|",
        ]
        for v, a in results["alignment"].items():
            lines.append(
                f"| {v} | {fmt(a['same_raw'])} | {fmt(a['other_raw'])} | {fmt(a.get('same_projected'))} "
                f"| {fmt(a.get('other_projected'))} |"
            )
    return "\n".join(lines)
