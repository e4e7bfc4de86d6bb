"""``protein-ttt`` run: perplexity of real sequences and zero-shot fitness on Potts families, before/after TTT.

Phases (each target is checkpointed, so ``--resume`` skips finished ones):

1. ``perplexity`` (claims 1 and 3): for every real sequence (AntiBERTy / fair-esm READMEs), the
   pseudo-perplexity ``exp(−mean_i log p(x_i | x_{\\i}))`` of the base model, TTT on that sequence, the
   pseudo-perplexity again, then ``reset()``: the logits of the reset model on the sequence and every
   parameter are compared with the base model's (max absolute difference; 0 = exact).
2. ``fitness`` (claim 2 and the controlled check): ``potts_families`` random Potts models (fields and sparse
   couplings known); ``msa_rows + 1`` Gibbs samples per family, the first is the wild type. Every single mutant
   (19 L) gets its exact effect ``ΔE`` and the model's masked-marginal score; Spearman ρ per family for the
   base model, after TTT on the wild type alone (the paper's setting), and after TTT on the family's sampled
   MSA (controlled check: the paper's ``msa=True`` mode on an alignment that carries the fitness signal). The
   independent-site profile of the same MSA is reported as what the alignment alone reaches.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from iclr26_science.methods.protein_ttt.config import ProteinTTTConfig
from iclr26_science.methods.protein_ttt.model import build_lm, control_settings, ttt_settings
from iclr26_science.proteins import (
    AMINO_ACIDS,
    MaskedLM,
    ProteinRecord,
    ProteinTTT,
    antibody_sequences,
    esm_readme_proteins,
    masked_marginals,
    parse_mutations,
    pseudo_perplexity,
    random_potts,
    score_mutants,
    single_mutants,
    spearman,
)
from iclr26_science.proteins.potts import decode
from iclr26_shared.runs import RunDir

__all__ = ["dry_run", "fitness_target", "perplexity_target", "profile_scores", "real_sequences", "run"]


def real_sequences(cfg: ProteinTTTConfig) -> list[ProteinRecord]:
    """The configured real sequences, in order (at most ``max_sequences``)."""
    loaders = {"antiberty-readme": antibody_sequences, "esm-readme": esm_readme_proteins}
    recs = [r for name in cfg.sequence_sets for r in loaders[name]()]
    return recs[: cfg.max_sequences] if cfg.max_sequences else recs


def _logits(lm: MaskedLM, seq: str) -> torch.Tensor:
    lm.eval()
    with torch.no_grad():
        return lm(torch.tensor([lm.alphabet.encode(seq)], device=lm.device)).float().cpu()


def perplexity_target(lm: MaskedLM, rec: ProteinRecord, cfg: ProteinTTTConfig, seed: int) -> dict[str, Any]:
    """Pseudo-perplexity before/after TTT on ``rec`` and the reset check (the model is reset on return)."""
    seq = rec.sequence
    ttt = ProteinTTT(lm, ttt_settings(cfg, seed))
    base_params = {k: v.detach().clone() for k, v in lm.state_dict().items()}
    base_logits = _logits(lm, seq)
    ppl0 = pseudo_perplexity(masked_marginals(lm, seq, window=cfg.crop_size), seq, lm)
    res = ttt.ttt(seq)
    ppl1 = pseudo_perplexity(masked_marginals(lm, seq, window=cfg.crop_size), seq, lm)
    changed = float((_logits(lm, seq) - base_logits).abs().max())
    ttt.reset()
    after = lm.state_dict()
    param_diff = max(float((after[k].float() - v.float()).abs().max()) for k, v in base_params.items())
    logit_diff = float((_logits(lm, seq) - base_logits).abs().max())
    return {
        "name": rec.name, "source": rec.source, "length": len(seq), "ppl_base": ppl0, "ppl_ttt": ppl1,
        "ttt_seconds": res.seconds, "trainable_params": res.trainable_params,
        "final_loss": res.history[-1]["loss"], "ttt_logit_change": changed,
        "reset_logit_diff": logit_diff, "reset_param_diff": param_diff,
    }  # fmt: skip


def profile_scores(msa: np.ndarray, wild_type: str, mutants: list[str], pseudocount: float = 0.5) -> np.ndarray:
    """Independent-site log-frequency scores ``Σ log f_i(mt) − log f_i(wt)`` from an ``[N, L]`` state alignment."""
    L = msa.shape[1]
    counts = np.full((L, len(AMINO_ACIDS)), pseudocount)
    np.add.at(counts, (np.broadcast_to(np.arange(L), msa.shape), msa), 1.0)
    logf = np.log(counts / counts.sum(1, keepdims=True))
    idx = {a: i for i, a in enumerate(AMINO_ACIDS)}
    return np.array(
        [sum(logf[m.pos, idx[m.mt]] - logf[m.pos, idx[m.wt]] for m in parse_mutations(s, wild_type)) for s in mutants]
    )


def fitness_target(lm: MaskedLM, family: int, cfg: ProteinTTTConfig, seed: int) -> dict[str, Any]:
    """One Potts family: Spearman ρ of masked-marginal scores vs exact ΔE, base / TTT / MSA-TTT (model reset)."""
    potts = random_potts(
        cfg.potts_length, seed=cfg.data_seed * 100_003 + family,
        field_scale=cfg.potts_field_scale, coupling_scale=cfg.potts_coupling_scale,
    )  # fmt: skip
    states = potts.sample(cfg.msa_rows + 1, sweeps=cfg.potts_sweeps, seed=cfg.data_seed * 100_003 + family)
    wt, msa = decode(states[:1])[0], decode(states[1:])
    mutants = single_mutants(wt)
    truth = potts.mutant_effects(wt, mutants)
    window = cfg.crop_size
    base = score_mutants(lm, wt, mutants, window=window)
    ppl0 = pseudo_perplexity(masked_marginals(lm, wt, window=window), wt, lm)
    ttt = ProteinTTT(lm, ttt_settings(cfg, seed))
    ttt.ttt(wt)
    tuned = score_mutants(lm, wt, mutants, window=window)
    ppl1 = pseudo_perplexity(masked_marginals(lm, wt, window=window), wt, lm)
    ttt.reset()
    # weak targets are selected on one half of the mutants and scored on the other (claim 2 would otherwise
    # select on the very noise it then measures: regression to the mean makes a "gain" on its own)
    perm = np.random.default_rng(cfg.data_seed * 100_003 + family).permutation(len(mutants))
    sel, ev = perm[: len(perm) // 2], perm[len(perm) // 2 :]
    row: dict[str, Any] = {
        "family": family, "length": cfg.potts_length, "mutants": len(mutants), "wild_type": wt,
        "rho_base": spearman(base, truth), "rho_ttt": spearman(tuned, truth),
        "rho_base_select": spearman(base[sel], truth[sel]), "rho_base_scored": spearman(base[ev], truth[ev]),
        "rho_ttt_scored": spearman(tuned[ev], truth[ev]),
        "rho_profile": spearman(profile_scores(states[1:], wt, mutants), truth),
        "ppl_base": ppl0, "ppl_ttt": ppl1,
    }  # fmt: skip
    if cfg.control:
        ctl = ProteinTTT(lm, control_settings(cfg, seed))
        ctl.ttt(wt, msa=msa)
        row["rho_msa_ttt"] = spearman(score_mutants(lm, wt, mutants, window=window), truth)
        ctl.reset()
    return row


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return float(np.mean(xs)) if xs else math.nan


def summarise(perplexity: list[dict[str, Any]], fitness: list[dict[str, Any]], cfg: ProteinTTTConfig) -> dict[str, Any]:
    """Means over targets (claims read these)."""
    out: dict[str, Any] = {}
    if perplexity:
        base, tuned = np.array([r["ppl_base"] for r in perplexity]), np.array([r["ppl_ttt"] for r in perplexity])
        out["perplexity_summary"] = {
            "targets": len(perplexity),
            "mean_log_ppl_base": float(np.mean(np.log(base))),
            "mean_log_ppl_ttt": float(np.mean(np.log(tuned))),
            "win_fraction": float(np.mean(tuned < base)),
            "mean_ppl_base": _mean([r["ppl_base"] for r in perplexity]),
            "mean_ppl_ttt": _mean([r["ppl_ttt"] for r in perplexity]),
            "max_reset_logit_diff": max(r["reset_logit_diff"] for r in perplexity),
            "max_reset_param_diff": max(r["reset_param_diff"] for r in perplexity),
            "min_ttt_logit_change": min(r["ttt_logit_change"] for r in perplexity),
        }
    if fitness:
        weak = [r for r in fitness if r["rho_base_select"] < cfg.weak_threshold]
        out["fitness_summary"] = {
            "families": len(fitness),
            "weak_families": len(weak),
            "weak_threshold": cfg.weak_threshold,
            "mean_rho_base_weak": _mean([r["rho_base_scored"] for r in weak]),
            "mean_rho_ttt_weak": _mean([r["rho_ttt_scored"] for r in weak]),
            "mean_rho_base": _mean([r["rho_base"] for r in fitness]),
            "mean_rho_ttt": _mean([r["rho_ttt"] for r in fitness]),
            "mean_rho_msa_ttt": _mean([r.get("rho_msa_ttt", math.nan) for r in fitness]),
            "mean_rho_profile": _mean([r["rho_profile"] for r in fitness]),
        }
    return out


def run(cfg: ProteinTTTConfig, run: RunDir) -> dict[str, Any]:
    """Both phases, checkpointed per target; returns the results (per-target tables and their means)."""
    torch.manual_seed(run.seed)
    lm = build_lm(cfg, seed=run.seed).to(run.device)
    records = real_sequences(cfg)
    ckpt = run.load_checkpoint()
    state: dict[str, Any] = {"perplexity": [], "fitness": []} if ckpt is None else ckpt[1]
    total = len(records) + cfg.potts_families
    done = len(state["perplexity"]) + len(state["fitness"])
    with run.progress(total, "protein-ttt", completed=done) as bar:
        for k in range(len(state["perplexity"]), len(records)):
            row = perplexity_target(lm, records[k], cfg, run.seed + k)
            state["perplexity"].append(row)
            done += 1
            run.log(done, **{f"ppl/{row['name']}/base": row["ppl_base"], f"ppl/{row['name']}/ttt": row["ppl_ttt"]})
            run.save_checkpoint(done, state)
            bar.advance(ppl=row["ppl_ttt"])
        for f in range(len(state["fitness"]), cfg.potts_families):
            row = fitness_target(lm, f, cfg, run.seed + 1000 + f)
            state["fitness"].append(row)
            done += 1
            run.log(done, **{f"rho/{f}/base": row["rho_base"], f"rho/{f}/ttt": row["rho_ttt"]})
            run.save_checkpoint(done, state)
            bar.advance(rho=row["rho_ttt"])
    results: dict[str, Any] = {
        "model": lm.name,
        "perplexity": state["perplexity"],
        "fitness": state["fitness"],
        **summarise(state["perplexity"], state["fitness"], cfg),
        "config": {"perplexity_margin": cfg.perplexity_margin, "spearman_margin": cfg.spearman_margin,
                   "control_margin": cfg.control_margin, "weak_threshold": cfg.weak_threshold},
    }  # fmt: skip
    _figures(results, run)
    return results


def _figures(results: dict[str, Any], run: RunDir) -> None:
    from iclr26_shared.plotting import plot_bars

    if results["perplexity"]:
        values = {f"{r['name']} {w}": r[f"ppl_{w}"] for r in results["perplexity"] for w in ("base", "ttt")}
        plot_bars(run.figure_path("perplexity"), values, ylabel="pseudo-perplexity", title="before / after TTT")
    if results["fitness"]:
        keys = [k for k in ("base", "ttt", "msa_ttt", "profile") if f"rho_{k}" in results["fitness"][0]]
        values = {f"fam{r['family']} {k}": r[f"rho_{k}"] for r in results["fitness"] for k in keys}
        plot_bars(run.figure_path("spearman"), values, ylabel="Spearman ρ vs exact ΔE", title="Potts families")


def dry_run(cfg: ProteinTTTConfig, device: torch.device) -> dict[str, Any]:
    """The preset's model with the recipe's trainable parameters (LoRA adapters injected when asked) on its
    first real sequence: one TTT optimiser step at batch 2 (one micro-step) and one evaluation step (the
    MLM loss of two fresh masked copies); the model is reset afterwards."""
    import dataclasses

    from iclr26_science.proteins import ProteinTTT, mlm_loss

    lm = build_lm(cfg, seed=0).to(device)
    records = real_sequences(cfg)
    seq = records[0].sequence if records else "MKTAYIAKQRQISFVKSHFSRQ"
    handle = ProteinTTT(lm, dataclasses.replace(ttt_settings(cfg, 0), steps=1, ags=1, batch_size=2))
    result = handle.ttt(seq)
    masked, targets, mask = handle.sample_batch(handle.tokenize(seq))
    with torch.no_grad():
        ev = float(mlm_loss(lm(masked.to(device)), targets.to(device), mask.to(device), cfg.loss_kind))
    handle.reset()
    return {
        "parameters": int(result.trainable_params),
        "train_loss": float(result.history[-1]["loss"]),
        "eval_loss": ev,
        "model": lm.name,
        "sequence_length": len(seq),
    }
