"""The central claims of RESTRAIN (Yu et al., ICLR 2026, main table and ablation table), checked on
``results.json`` (only for the variants a run trained). pass@1 is the mean grader score over samples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = ["CONTROL_MARGIN", "GAP_SHARE", "STABILITY_MARGIN", "WIN_MARGIN", "claims", "report"]

#: pass@1 the gold-label GRPO control must gain over the base model. Set (before the quick preset was
#: measured) from the diagnosis runs at the corrected lr, where gold GRPO gained 0.03-0.06 in 150-300 steps
#: while the broken setting (lr 3e-4) gained nothing; the tiny base is capacity-limited, so RL with true
#: rewards mostly sharpens it, which is worth a few points, not tens.
CONTROL_MARGIN = 0.02
#: pass@1 by which RESTRAIN must beat a reference (a tie is no improvement). One quick run's pass@1 has a
#: standard error of at least 0.015 over 256 prompts x 4 samples (``pass@1_se`` in results.json, the spread
#: of the per-prompt means); 0.03 is two of them, so a single run's win inside its own noise does not hold.
WIN_MARGIN = 0.03
#: How much more TTRL must lose from its best curve point than RESTRAIN for "TTRL degrades, RESTRAIN stays".
STABILITY_MARGIN = 0.02
#: Share of the gap between the base model and gold-label GRPO that RESTRAIN must close on held-out prompts
#: (held-out protocol). The paper's RESTRAIN reaches 51.0 against gold GRPO's 51.4 (main table), i.e. nearly
#: all of the gap; half of it is the weaker claim a tiny model at CPU scale is held to.
GAP_SHARE = 0.5


def _pass1(results: Mapping[str, Any], variant: str) -> float | None:
    r = results.get("variants", {}).get(variant)
    return None if r is None else float(r["final"]["pass@1"])


def _drop(results: Mapping[str, Any], variant: str) -> float:
    """Best curve point minus the last one (>= 0): how far training fell back from its peak."""
    curve = [float(c["pass@1"]) for c in results["variants"][variant]["curve"]]
    return max(curve) - curve[-1]


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """RESTRAIN vs base and TTRL, stability over steps, the ablation ordering and the gold-label control."""
    out: list[Claim] = []
    base = float(results["base"]["final"]["pass@1"])
    chance = float(results["chance"])
    p = {v: _pass1(results, v) for v in ("ttrl", "restrain", "no_plw", "no_nrp", "no_pw", "gold")}
    task = results["settings"]["task"]
    paper_main = "Qwen3-4B-Base avg pass@1: RESTRAIN 51.0, TTRL 42.2, gold GRPO 51.4 (main table)"
    if p["restrain"] is not None:
        out.append(
            Claim(
                claim=f"without labels, RESTRAIN improves test pass@1 over the base model by >= {WIN_MARGIN} ({task})",
                metric="test pass@1 (baseline: base model)",
                ours=p["restrain"],
                baseline=base,
                better="higher",
                margin=WIN_MARGIN,
                chance=chance,
                paper=paper_main,
            )
        )
    if p["restrain"] is not None and p["ttrl"] is not None:
        out += [
            Claim(
                claim=f"RESTRAIN beats TTRL (majority-vote rewards) by >= {WIN_MARGIN} at equal steps ({task})",
                metric="test pass@1 (baseline: TTRL)",
                ours=p["restrain"],
                baseline=p["ttrl"],
                better="higher",
                margin=WIN_MARGIN,
                chance=chance,
                paper=paper_main,
            ),
            Claim(
                claim=f"TTRL falls back from its best pass@1 while RESTRAIN stays stable "
                f"(RESTRAIN's drop from its peak is smaller by >= {STABILITY_MARGIN})",
                metric="best minus final curve pass@1 (lower is better; baseline: TTRL)",
                ours=_drop(results, "restrain"),
                baseline=_drop(results, "ttrl"),
                better="lower",
                margin=STABILITY_MARGIN,
                paper="TTRL collapses after ~50 steps on MATH500; RESTRAIN stays stable (training curves)",
            ),
        ]
    if p["no_plw"] is not None and p["no_nrp"] is not None and p["no_pw"] is not None:
        out.append(
            Claim(
                claim="removing pseudo-label weighting hurts most (lowest pass@1 of the three ablations)",
                metric="test pass@1 (lower is the claimed direction; baseline: worst of -NRP, -prompt weighting)",
                ours=p["no_plw"],
                baseline=min(p["no_nrp"], p["no_pw"]),
                better="lower",
                margin=WIN_MARGIN,
                paper="avg pass@1: -PLW 37.5 (collapses), -NRP 42.1; AIME25 -prompt weighting 18.1 (ablation table)",
            )
        )
    if p["gold"] is not None:
        out.append(
            Claim(
                claim=f"control: GRPO with gold rewards lifts pass@1 over the base model by >= {CONTROL_MARGIN} "
                "(the RL loop works at this scale)",
                metric="test pass@1 (baseline: base model)",
                ours=p["gold"],
                baseline=base,
                better="higher",
                margin=CONTROL_MARGIN,
                chance=chance,
                paper="gold-label GRPO is the upper bound: 51.4 avg (main table)",
            )
        )
    if p["restrain"] is not None and p["gold"] is not None and results["settings"].get("prompt_source") == "train":
        # closes >= GAP_SHARE of the gap  <=>  restrain >= base + GAP_SHARE (gold - base); without a measured gap
        # (gold GRPO not ahead of the base by the control margin) the target sits at the base, the claim's
        # trivial level, and the verdict is inconclusive
        gap = p["gold"] - base
        target = base + GAP_SHARE * gap if gap >= CONTROL_MARGIN else base
        out.append(
            Claim(
                claim=f"held-out protocol (RL on the unlabelled train split, pass@1 on held-out test prompts): "
                f"RESTRAIN closes >= {GAP_SHARE:.0%} of the gap between the base model and gold-label GRPO "
                f"(by >= {WIN_MARGIN}) ({task})",
                metric=f"test pass@1 (baseline: base + {GAP_SHARE} x (gold GRPO - base))",
                ours=p["restrain"],
                baseline=target,
                better="higher",
                margin=WIN_MARGIN,
                chance=base,
                paper="RESTRAIN 51.0 vs gold-label GRPO 51.4 avg pass@1, Qwen3-4B-Base on DAPO-14k (main table)",
            )
        )
    return out


def report(results: Mapping[str, Any]) -> str:
    """Markdown: final test metrics per variant and the pass@1 curve points."""
    s = results["settings"]
    b = results["base"]["final"]
    maj_key = next(k for k in b if k.startswith("maj@"))

    def se(f: Mapping[str, Any]) -> str:
        return f"{f['pass@1_se']:.4f}" if "pass@1_se" in f else "-"

    rows: list[list[Any]] = [
        ["base", f"{b['pass@1']:.4f}", se(b), f"{b[maj_key]:.4f}", f"{b['parse_rate']:.3f}", "-", "-", "-", "-"]
    ]
    for v, r in results["variants"].items():
        f = r["final"]
        curve = ", ".join(f"{c['step']}: {c['pass@1']:.3f}" for c in r["curve"])
        acts = r.get("acts", {})
        nrp = f"{acts['nrp_rate']:.3f}" if "nrp_rate" in acts else "-"
        plw = f"{acts['minority_weight']:.3f}" if "minority_weight" in acts else "-"
        top = acts.get("majority_weight")
        top_cell = f"{top:.3f}" if isinstance(top, float) and top == top else "-"
        rows.append(
            [v, f"{f['pass@1']:.4f}", se(f), f"{f[maj_key]:.4f}", f"{f['parse_rate']:.3f}", nrp, plw, top_cell, curve]
        )
    headers = [
        "run",
        "pass@1",
        "pass@1 s.e.",
        "maj@k",
        "parse rate",
        "NRP fires",
        "weight on minority labels",
        "weight on the majority label",
        "curve pass@1 (step: value)",
    ]
    return "\n".join(
        [
            f"## {s['task']}, policy {s['model']}, n = {s['rollouts']} rollouts, {s['steps']} steps x "
            f"{s['prompts_per_step']} prompts (k={s['k']}, sigma={s['sigma']}, kappa={s['kappa']}, delta={s['delta']})",
            "",
            markdown_table(headers, rows),
            "",
            "NRP fires: share of RL prompts whose majority count was under kappa (all-negative update); weight on "
            "minority labels: mean pseudo-label weight on candidates with fewer votes than the majority "
            "(0 for TTRL and -PLW).",
            "",
            f"Chance pass@1 (uniform over the answer range): {results['chance']:.4f}.",
            "",
        ]
    )
