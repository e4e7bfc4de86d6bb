"""The paper's claims for ``cryolvm``, checked on results.json (light: no torch).

Paper (CryoLVM, arXiv 2602.02620): the fine-tuned model improves map–model agreement over the deposited map
and over post-processing baselines (sharpening Table: CC_mask 0.788 → 0.821, EMReady 0.802; super-resolution
FSC-0.5 4.64 → 4.58 Å), JEPA pre-training beats training from scratch (App. G), and the histogram
alignment term speeds convergence (Table 9). Chance levels: a map with no skill has CC 0; for pre-trained vs
scratch the trivial restoration (the input map itself) is the level both sides must beat; resolutions have
no chance level.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = ["amplitude_split_noise", "claims", "report"]

_BASELINES = ("input", "global-sharpen", "local-scale")


def _auc(curve: Mapping[str, Any], key: str = "test_cc") -> float:
    """Mean CC of the curve ``key`` over the recorded steps (area under the convergence curve per step); NaN
    when the curve was not recorded (``test_cc``: runs before it existed)."""
    vals = [float(v) for v in curve.get(key, []) if v is not None]
    return sum(vals) / len(vals) if vals else math.nan


def _num(x: Any) -> float:
    """A results.json number (null, written for NaN, back to NaN)."""
    return math.nan if x is None else float(x)


def amplitude_split_noise(results: Mapping[str, Any], baseline: str, main: str = "cryolvm") -> float:
    """Split noise of the spectrum claim's gain: the standard error of the held-out mean of the paired
    per-structure differences ``d_s = amp_dev_main(s) − amp_dev_baseline(s)``,

        SE = sd(d) / √n   (sample sd, ddof 1; n held-out structures with both values finite),

    i.e. how far the mean gain moves with another draw of held-out structures. NaN when n < 2 or the
    per-structure rows (``results["test"]``) are absent."""
    d = []
    for methods in results.get("test", {}).values():
        if main in methods and baseline in methods:
            a, b = _num(methods[main].get("amp_dev")), _num(methods[baseline].get("amp_dev"))
            if math.isfinite(a) and math.isfinite(b):
                d.append(a - b)
    n = len(d)
    if n < 2:
        return math.nan
    mean = sum(d) / n
    return math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1) / n)


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """(1) CC_mask, (2) FSC-0.5 resolution and (3) the radial amplitude spectrum over the best of
    input/global/local sharpening (held-out); (4) pre-trained beats scratch; (5) the histogram term speeds
    convergence, on the held-out crops' curve (α and the bins were chosen on the validation curve, which it
    does not score); (6) controlled check. Claim 3 is left out for results without the spectrum metric; its
    margin is ``max(amplitude_margin, SE)`` with SE the held-out split noise (:func:`amplitude_split_noise`)."""
    cfg = results.get("config", {})
    s = results.get("summary", {})
    main = "cryolvm" if "cryolvm" in s else None
    out: list[Claim] = []
    if main is None:
        return out
    task = results.get("task", "?")
    base_cc = max(s[b]["cc_mask"] for b in _BASELINES if b in s)
    base_res = min(s[b]["fsc05"] for b in _BASELINES if b in s)
    out.append(
        Claim(
            claim=f"{task}: on held-out structures the fine-tuned model's CC_mask beats the input map and classical "
            "sharpening (best of input, global B-factor, LocScale-like)",
            metric="mean CC_mask vs the molmap target (held-out)",
            ours=s[main]["cc_mask"],
            baseline=base_cc,
            better="higher",
            margin=float(cfg.get("cc_margin", 0.005)),
            chance=0.0,
            paper="sharpening CC_mask 0.821 vs deposited 0.788, EMReady 0.802",
        )  # fmt: skip
    )
    out.append(
        Claim(
            claim=f"{task}: on held-out structures the fine-tuned model's FSC-0.5 resolution beats the input map and "
            "classical sharpening (best of the three)",
            metric="mean FSC-0.5 resolution vs the molmap target, Å (held-out)",
            ours=s[main]["fsc05"],
            baseline=base_res,
            better="lower",
            margin=float(cfg.get("resolution_margin", 0.1)),
            paper="super-resolution FSC-0.5 4.58 Å vs deposited 4.64 Å",
        )  # fmt: skip
    )
    if all("amp_dev" in s[m] for m in (main, *_BASELINES) if m in s):
        # FSC is blind to an isotropic filter: this claim is the one that sees sharpening itself; its margin is
        # the larger of the configured minimum gain and the held-out split noise of the paired gain
        best_amp = min((b for b in _BASELINES if b in s), key=lambda b: _num(s[b]["amp_dev"]))
        noise = amplitude_split_noise(results, best_amp, main)
        amp_margin = float(cfg.get("amplitude_margin", 0.02))
        out.append(
            Claim(
                claim=f"{task}: on held-out structures the fine-tuned model's radial amplitude spectrum is closer to "
                "the target's than the input map's and classical sharpening's (best of the three)",
                metric="mean amplitude deviation from the molmap target (RMS log amplitude, offset removed; held-out)",
                ours=_num(s[main]["amp_dev"]),
                baseline=_num(s[best_amp]["amp_dev"]),
                better="lower",
                margin=max(amp_margin, noise) if math.isfinite(noise) else amp_margin,
                paper="sharpening restores the target's amplitude falloff (CC_mask 0.821 vs 0.788; FSC cannot see it)",
            )  # fmt: skip
        )
    if "scratch" in s:
        out.append(
            Claim(
                claim=f"{task}: JEPA pre-training beats training from scratch at equal fine-tuning steps (held-out)",
                metric="mean CC_mask (held-out), pre-trained vs scratch",
                ours=s[main]["cc_mask"],
                baseline=s["scratch"]["cc_mask"],
                better="higher",
                margin=float(cfg.get("cc_margin", 0.005)),
                # the trivial restoration returns its input: a scratch model below the input map has to be
                # beaten by more than "return the input" before pre-training counts
                chance=s["input"]["cc_mask"] if "input" in s else 0.0,
                paper="App. G: pre-trained > scratch on all tasks",
            )  # fmt: skip
        )
    curves = results.get("curves", {})
    if "cryolvm-mse" in curves and main in curves:
        out.append(
            Claim(
                claim=f"{task}: the histogram alignment term speeds convergence (MSE + L_Hist vs MSE alone), on crops "
                "of the held-out structures (α and the bins were chosen on the validation frames' curve)",
                metric="mean CC on held-out crops over the fine-tuning curve",
                ours=_auc(curves[main]),
                baseline=_auc(curves["cryolvm-mse"]),
                better="higher",
                margin=float(cfg.get("cc_margin", 0.005)),
                chance=0.0,
                paper="Table 9: faster convergence, small final gain",
            )  # fmt: skip
        )
    ctl = results.get("control", {})
    if main in ctl and "input" in ctl:
        out.append(
            Claim(
                claim=f"{task}: controlled check: on training structures (in distribution) the fine-tuned model's "
                "CC_mask beats the input map",
                metric="mean CC_mask vs the molmap target (training structures)",
                ours=ctl[main]["cc_mask"],
                baseline=ctl["input"]["cc_mask"],
                better="higher",
                margin=float(cfg.get("control_margin", 0.05)),
                chance=0.0,
                paper="supervised restoration fits its training distribution (not a paper number)",
            )  # fmt: skip
        )
    return out


def _f(x: Any, fmt: str = ".3f") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def report(results: Mapping[str, Any]) -> str:
    """Markdown: per-structure metrics per method, means, controlled check, curve summaries."""
    lines = [f"Task: {results.get('task', '?')}", ""]
    st = results.get("structures", {})
    if st:
        lines += [f"Training: {len(st.get('train', []))} ADK frames; held-out: {', '.join(st.get('test', []))}; "
                  f"pre-training corpus: {len(st.get('pretrain', []))} input maps", ""]  # fmt: skip
    summary = results.get("summary", {})

    def cells(v: Mapping[str, Any]) -> list[str]:
        return [_f(v["fsc05"], ".2f"), _f(v["fsc0143"], ".2f"), _f(v["cc_box"]), _f(v["cc_mask"]),
                _f(v.get("amp_dev")), _f(v.get("delta_b"), ".0f")]  # fmt: skip

    rows = [[s, m, *cells(v)] for s, methods in results.get("test", {}).items() for m, v in methods.items()]
    rows += [["**mean**", m, *cells(v)] for m, v in summary.items()]
    headers = ["structure", "method", "FSC-0.5 Å", "FSC-0.143 Å", "CC_box", "CC_mask", "amp. dev.", "ΔB Å²"]
    lines += ["## Held-out structures (vs molmap target)", ""]
    lines += markdown_table(headers, rows).splitlines()
    lines += ["", "amp. dev.: RMS log radial amplitude vs the target's (offset removed; 0 = the target's falloff); "
              "ΔB: the map's falloff relative to the target's (> 0 blurrier, < 0 sharper)."]  # fmt: skip
    ctl = results.get("control", {})
    if ctl:
        lines += ["", "## Controlled check: training structures", ""]
        ctl_rows = [[m, _f(v["cc_mask"]), _f(v["fsc05"], ".2f")] for m, v in ctl.items()]
        lines += markdown_table(["method", "CC_mask", "FSC-0.5 Å"], ctl_rows).splitlines()
    curves = results.get("curves", {})
    if curves:
        lines += ["", "## Fine-tuning curves (validation CC; held-out crops' CC: the histogram claim)", ""]
        curve_rows = []
        for n, c in curves.items():
            vals = c.get("val_cc", [])
            curve_rows.append([n, _f(vals[0] if vals else None), _f(vals[-1] if vals else None),
                               _f(_auc(c, "val_cc")), _f(_auc(c))])  # fmt: skip
        headers = ["variant", "val first", "val last", "val mean over curve", "held-out mean over curve"]
        lines += markdown_table(headers, curve_rows).splitlines()
    pre = results.get("pretrain", {})
    if pre.get("steps"):
        lines += ["", f"JEPA pre-training: {pre['steps']} steps, loss {_f(pre['loss_first'])} → {_f(pre['loss_last'])}"]
        ts = pre.get("token_spread")
        if ts:
            a, b = ts["init"], ts["pretrained"]
            lines.append(
                "Collapse check (bottleneck tokens of 16 corpus crops): mean pairwise cosine "
                f"{_f(a['mean_cos'])} at init → {_f(b['mean_cos'])} pre-trained; "
                f"feature spread {_f(a['feature_std'])} → {_f(b['feature_std'])}"
            )
    return "\n".join(lines)
