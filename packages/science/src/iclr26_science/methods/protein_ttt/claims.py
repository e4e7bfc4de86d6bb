"""The paper's claims for ``protein-ttt``, checked on results.json (light: no torch).

Paper: *One protein is all you need* (arXiv 2411.02109): TTT lowers the masked-LM perplexity of the target
(§3, the self-supervised objective it minimises), improves zero-shot fitness prediction, most on proteins
where the base model is weak (ProteinGym: ESM2-35M 0.3211 → 0.3407 average Spearman, gains largest for
high-perplexity proteins), and ``ttt_reset()`` restores the original model before the next protein.
Chance levels: a model no better than uniform over the 20 amino acids has pseudo-perplexity 20 (log 20 on
the log scale claim 1 judges); a fitness predictor without skill has Spearman 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = ["RESET_TOL", "UNIFORM_PERPLEXITY", "claims", "report"]

#: Pseudo-perplexity of a uniform guess over the 20 standard amino acids.
UNIFORM_PERPLEXITY = 20.0
#: "Exactly restored": every logit and parameter difference after reset below this (a bit-exact copy
#: gives 0; a strict verdict needs a bound strictly above it).
RESET_TOL = 1e-12


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """(1) perplexity drop on real sequences: mean log pseudo-perplexity and (1b) per-sequence wins;
    (2) exact reset; (3) Spearman gain on weak Potts targets (selected on a split it does not score);
    (4) controlled check: TTT on the family's MSA raises Spearman (a known-large effect)."""
    cfg = results.get("config", {})
    out: list[Claim] = []
    ppl = results.get("perplexity_summary")
    if ppl:
        out.append(
            Claim(
                claim="TTT lowers the masked-LM pseudo-perplexity of the target protein (mean log pseudo-perplexity "
                "over real sequences: no one off-distribution protein decides it)",
                metric="mean log pseudo-perplexity (after vs before TTT)",
                ours=ppl["mean_log_ppl_ttt"],
                baseline=ppl["mean_log_ppl_base"],
                better="lower",
                margin=float(cfg.get("perplexity_margin", 0.01)),
                chance=math.log(UNIFORM_PERPLEXITY),
                paper="TTT minimises the target's MLM loss; perplexity falls (Fig. 2 / §4)",
            )
        )
        out.append(
            Claim(
                claim="TTT lowers the pseudo-perplexity of most real sequences (share of sequences it lowers, "
                "more than half)",
                metric="share of sequences whose pseudo-perplexity TTT lowers",
                ours=ppl["win_fraction"],
                threshold=0.5,
                better="higher",
                paper="perplexity falls on the targets (Fig. 2)",
            )
        )
        out.append(
            Claim(
                claim="reset() restores the base model's predictions exactly (max |Δ logit| and |Δ θ| over targets, "
                f"below {RESET_TOL:g})",
                metric="max abs difference after reset",
                ours=max(ppl["max_reset_logit_diff"], ppl["max_reset_param_diff"]),
                threshold=RESET_TOL,
                better="lower",
                paper="ttt_reset() restores θ₀",
            )
        )
    fit = results.get("fitness_summary")
    if fit:
        out.append(
            Claim(
                claim="TTT improves the Spearman correlation of zero-shot fitness predictions on targets where the "
                "base model is weak (mean over weak Potts families; weak is chosen on half of the mutants, ρ is "
                "scored on the other half)",
                metric="mean Spearman ρ vs exact ΔE on weak targets, scored half (after vs before TTT)",
                ours=fit["mean_rho_ttt_weak"],
                baseline=fit["mean_rho_base_weak"],
                better="higher",
                margin=float(cfg.get("spearman_margin", 0.02)),
                chance=0.0,
                paper="ESM2-35M 0.3211 → 0.3407 avg Spearman on ProteinGym; largest gains on weak targets",
            )
        )
        msa = fit.get("mean_rho_msa_ttt")
        if msa is not None and math.isfinite(float(msa)):
            out.append(
                Claim(
                    claim="controlled check: TTT on the target family's sampled MSA (msa=True) raises the Spearman "
                    "correlation (the alignment carries the fitness signal)",
                    metric="mean Spearman ρ vs exact ΔE (MSA-TTT vs base)",
                    ours=float(msa),
                    baseline=fit["mean_rho_base"],
                    better="higher",
                    margin=float(cfg.get("control_margin", 0.1)),
                    chance=0.0,
                    paper="MSA mode of the reference code (known-large effect here; not a paper number)",
                )
            )
    return out


def _f(x: Any, fmt: str = ".3f") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def report(results: Mapping[str, Any]) -> str:
    """Markdown: per-target perplexity table, per-family Spearman table and their means."""
    lines = [f"Model: {results.get('model', '?')}", ""]
    rows = results.get("perplexity", [])
    if rows:
        s = results.get("perplexity_summary", {})
        table = [
            [r["name"], r["source"], r["length"], _f(r["ppl_base"]), _f(r["ppl_ttt"]), _f(r["ttt_seconds"], ".1f"),
             _f(r["reset_logit_diff"], ".2g")]
            for r in rows
        ]  # fmt: skip
        table.append(["**mean**", "", "", _f(s.get("mean_ppl_base")), _f(s.get("mean_ppl_ttt")), "", ""])
        if "mean_log_ppl_base" in s:
            table.append(
                ["**mean log** (claim 1)", "", "", _f(s["mean_log_ppl_base"]), _f(s["mean_log_ppl_ttt"]), "", ""]
            )
        headers = ["target", "source", "length", "base", "after TTT", "TTT s", "reset max |Δ logit|"]
        lines += ["## Pseudo-perplexity of real sequences", "", *markdown_table(headers, table).splitlines()]
        if "win_fraction" in s:
            lines += ["", f"TTT lowered the pseudo-perplexity of {s['win_fraction']:.0%} of the sequences."]
    fam = results.get("fitness", [])
    if fam:
        s = results.get("fitness_summary", {})
        lines += ["", f"## Zero-shot fitness on Potts families (Spearman ρ vs exact ΔE; weak: base ρ < "
                  f"{s.get('weak_threshold')} on the selection half of the mutants)", ""]  # fmt: skip
        table = []
        for r in fam:
            weak = "yes" if r.get("rho_base_select", r["rho_base"]) < s.get("weak_threshold", 0.3) else "no"
            table.append([r["family"], r["length"], r["mutants"], weak, _f(r["rho_base"]), _f(r["rho_ttt"]),
                          _f(r.get("rho_msa_ttt")), _f(r["rho_profile"]),
                          f"{_f(r['ppl_base'], '.1f')} → {_f(r['ppl_ttt'], '.1f')}"])  # fmt: skip
        table.append(["**mean (all)**", "", "", "", _f(s.get("mean_rho_base")), _f(s.get("mean_rho_ttt")),
                      _f(s.get("mean_rho_msa_ttt")), _f(s.get("mean_rho_profile")), ""])  # fmt: skip
        table.append([f"**mean (weak, {s.get('weak_families')}; scored half)**", "", "", "",
                      _f(s.get("mean_rho_base_weak")), _f(s.get("mean_rho_ttt_weak")), "", "", ""])  # fmt: skip
        headers = ["family", "L", "mutants", "weak", "base", "TTT", "MSA-TTT (control)", "MSA profile",
                   "ppl base → TTT"]  # fmt: skip
        lines += markdown_table(headers, table).splitlines()
    return "\n".join(lines)
