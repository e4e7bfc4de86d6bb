"""The paper's central claims of S²-Guidance, checked on ``results.json``, and the report tables.

Claims (missing experiments give no row):

* §4.1, Fig. 2: with the exact denoiser, CFG moves samples away from the class-conditional truth
  (W₂ of CFG at least twice that of the conditional model);
* §4.1, Fig. 2/3: with a trained denoiser, S² (Eq. 4) brings samples closer to the truth than CFG at
  the same λ; naive S² (Eq. 3, N sub-networks) does too, and one random sub-network per step keeps at
  least half of naive S²'s gain (§3.2, Fig. 8);
* §4.2, Table 1: S² improves the FID-style score over CFG and keeps class accuracy;
* §4.4: S² costs about +40% time per step over CFG.

Chance levels guard every comparison: the W₂ of class-blind samples from the whole mixture (toys), the
Fréchet distance of clamped Gaussian noise and 1/K class accuracy (+0.05) for the images, zero gain for
the naive-S² comparison. A wall-time claim is not measured when S² ran no extra forward pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim

__all__ = ["ACCURACY_TOLERANCE", "claims", "report"]

#: Added to 1/K: class accuracy up to this is "at chance".
ACCURACY_TOLERANCE = 0.05
#: The cost-per-step bound (paper: +40%, SD3 at 28 steps; we allow +60%).
MAX_TIME_RATIO = 1.6


def _gmm_claims(tag: str, res: Mapping[str, Any]) -> list[Claim]:
    claims: list[Claim] = []
    exact, mlp = res["exact"], res["mlp"]
    dim = tag.replace("d", "-D")
    chance = res.get("w2_unconditional")
    if "cfg" in exact and "cond" in exact:
        claims.append(
            Claim(
                claim=f"GMM {dim}, exact denoiser: CFG samples drift from the true class-conditional distribution",
                metric="W2 to truth, CFG / conditional",
                ours=exact["cfg"]["w2"] / exact["cond"]["w2"],
                threshold=2.0,
                better="higher",
                paper="Fig. 2: CFG shifts modes and leaks mass",
            )
        )
    claims.append(
        Claim(
            claim=f"GMM {dim}, trained MLP: S² samples are closer to the truth than CFG at the same λ",
            metric="W2 to truth (S² vs CFG)",
            ours=mlp["s2"]["w2"],
            baseline=mlp["cfg"]["w2"],
            better="lower",
            chance=chance,
            paper="Fig. 2/3: S² closest to ground truth",
        )
    )
    if "naive-s2" in mlp:
        gain_naive = mlp["cfg"]["w2"] - mlp["naive-s2"]["w2"]
        gain_s2 = mlp["cfg"]["w2"] - mlp["s2"]["w2"]
        claims += [
            Claim(
                claim=f"GMM {dim}, trained MLP: naive S² (N sub-networks per step) is closer to the truth than CFG",
                metric="W2 to truth (naive S² vs CFG)",
                ours=mlp["naive-s2"]["w2"],
                baseline=mlp["cfg"]["w2"],
                better="lower",
                chance=chance,
                paper="Eq. 3, Fig. 8",
            ),
            Claim(
                claim=(
                    f"GMM {dim}: S² (one random sub-network per step) keeps at least half of naive S²'s gain "
                    "over CFG at 3 instead of 2+N passes"
                ),
                metric="W2 gain over CFG: S² vs half of naive S²'s",
                ours=gain_s2,
                baseline=0.5 * gain_naive,
                better="higher",
                chance=0.0,
                paper="Eq. 3 vs Eq. 4; Fig. 8: gains from N > 1 are small",
            ),
        ]
    return claims


def _image_claims(res: Mapping[str, Any]) -> list[Claim]:
    g = res["guiders"]
    s2, cfg = g["s2"], g["cfg"]
    k = res.get("num_classes", 10)
    ratio = s2["seconds_per_step"] / cfg["seconds_per_step"]
    if s2.get("nfe_per_sample", 1) <= cfg.get("nfe_per_sample", 0):
        ratio = math.nan  # S² ran no third pass: there is no cost to measure
    return [
        Claim(
            claim=f"{res['dataset']} DiT: S² improves the FID-style score over CFG at the same λ",
            metric="Fréchet distance on in-repo classifier features (not Inception FID)",
            ours=s2["fd"],
            baseline=cfg["fd"],
            better="lower",
            chance=res.get("fd_noise"),
            paper="ImageNet-256 SiT-XL FID 2.15 → 2.03",
        ),
        Claim(
            claim=f"{res['dataset']} DiT: S² keeps class accuracy of samples over CFG (within 1 point)",
            metric="class accuracy of samples (in-repo classifier)",
            ours=s2["class_accuracy"],
            baseline=cfg["class_accuracy"],
            better="higher",
            margin=-0.01,
            chance=1.0 / k + ACCURACY_TOLERANCE,
            paper="T2I-CompBench attribute binding up",
        ),
        Claim(
            claim=(
                "S² costs at most +60% time per step over CFG (3 vs 2 forward passes; "
                "ratio of the two sampling runs in one process)"
            ),
            metric="seconds per sampling step, S² / CFG",
            ours=ratio,
            threshold=MAX_TIME_RATIO,
            better="lower",
            timing=True,
            paper="+40% (SD3, 28 steps: 29.2 s → 40.2 s)",
        ),
    ]


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """The toy claims (per mixture) and the image claims, as far as the run measured them."""
    out: list[Claim] = []
    for tag, res in sorted(results.get("gmm", {}).items()):
        out += _gmm_claims(tag, res)
    if "images" in results:
        out += _image_claims(results["images"])
    return out


def _fmt(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4g}"


def _alignment_line(name: str, a: Mapping[str, Any] | None) -> list[str]:
    if not a:
        return []
    return [
        f"{name}: cos(D̂_c − D_c, D_u − D_c) = {_fmt(a['cosine'])}, ‖D̂_c − D_c‖ / ‖D_u − D_c‖ = "
        f"{_fmt(a['norm_ratio'])} over {a['steps']} S² steps (positive cosine: dropping blocks moves the "
        "conditional prediction toward the unconditional one, so −ω(D̂_c − D_c) pushes along CFG's direction).",
        "",
    ]


def report(results: Mapping[str, Any]) -> str:
    """Markdown tables of every guider's metrics, the ω sweep and the correction's direction (report.md)."""
    lines: list[str] = []
    for tag, res in sorted(results.get("gmm", {}).items()):
        lines += [
            f"## Gaussian mixture {tag}",
            "",
            f"W2 noise floor (two true sample sets): {_fmt(res['truth_w2_floor'])}; class-blind samples "
            f"(chance): {_fmt(res.get('w2_unconditional'))}",
            "",
            "| denoiser | guider | W2 | mode shift | spread ratio | outside 99% | NFE/sample |",
            "|---|---|---|---|---|---|---|",
        ]
        for kind in ("exact", "mlp"):
            for name, m in res[kind].items():
                lines.append(
                    f"| {kind} | {name} | {_fmt(m['w2'])} | {_fmt(m['mode_shift'])} | {_fmt(m['spread_ratio'])} "
                    f"| {_fmt(m['outside_mass'])} | {m['nfe_per_sample']} |"
                )
        lines.append("")
        if res.get("s2_sweep"):
            lines += [
                f"### ω sweep, trained MLP ({tag}; ω = 0 is CFG)",
                "",
                "| ω | W2 | mode shift | spread ratio | outside 99% | NFE/sample |",
                "|---|---|---|---|---|---|",
            ]
            for m in res["s2_sweep"]:
                lines.append(
                    f"| {_fmt(m['s2_scale'])} | {_fmt(m['w2'])} | {_fmt(m['mode_shift'])} "
                    f"| {_fmt(m['spread_ratio'])} | {_fmt(m['outside_mass'])} | {m['nfe_per_sample']} |"
                )
            lines.append("")
        lines += _alignment_line(f"Direction of the S² term (MLP, {tag})", res.get("mlp_alignment"))
    if "images" in results:
        im = results["images"]
        lines += [
            f"## Images: {im['dataset']} ({im['num_train']} training images)",
            "",
            f"Evaluation classifier test accuracy {_fmt(im['classifier_test_accuracy'])}; "
            f"FD(test vs train) = {_fmt(im['fd_test_vs_train'])} (floor); FD of clamped noise = "
            f"{_fmt(im.get('fd_noise'))} (chance). FD is on in-repo classifier features, not Inception FID.",
            "",
            "| guider | FD ↓ | class accuracy ↑ | NFE/sample | s/step | time vs CFG |",
            "|---|---|---|---|---|---|",
        ]
        for name, m in im["guiders"].items():
            lines.append(
                f"| {name} | {_fmt(m['fd'])} | {_fmt(m['class_accuracy'])} | {m['nfe_per_sample']} "
                f"| {_fmt(m['seconds_per_step'])} | {_fmt(m['time_vs_cfg'])} |"
            )
        lines.append("")
        if im.get("s2_sweep"):
            lines += [
                "### ω sweep, DiT (ω = 0 is CFG)",
                "",
                "| ω | FD ↓ | class accuracy ↑ | NFE/sample | time vs CFG |",
                "|---|---|---|---|---|",
            ]
            for m in im["s2_sweep"]:
                lines.append(
                    f"| {_fmt(m['s2_scale'])} | {_fmt(m['fd'])} | {_fmt(m['class_accuracy'])} "
                    f"| {m['nfe_per_sample']} | {_fmt(m.get('time_vs_cfg'))} |"
                )
            lines.append("")
        lines += _alignment_line("Direction of the S² term (DiT)", im.get("alignment"))
    return "\n".join(lines)
