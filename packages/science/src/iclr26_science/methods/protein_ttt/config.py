"""Config and presets of ``iclr26-science protein-ttt`` (light: no torch, no extras)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError

__all__ = ["PRESETS", "ProteinTTTConfig"]

ModelName = Literal[
    "antiberty", "esm2-random", "esm2_t6_8M_UR50D", "esm2_t12_35M_UR50D", "esm2_t30_150M_UR50D", "esm2_t33_650M_UR50D"
]
SequenceSet = Literal["antiberty-readme", "esm-readme"]


@dataclass(frozen=True)
class ProteinTTTConfig:
    """ProteinTTT on real sequences (perplexity) and on Potts families with exact mutant fitness (Spearman)."""

    model: ModelName = "antiberty"
    """Masked protein LM: AntiBERTy (weights ship in the antiberty wheel), a random ESM-2 built from
    ``esm2_layers/width/heads`` (pipeline checks only), or a pretrained ESM-2 whose weights are in
    ``$ICLR26_DATA/esm/`` (never downloaded)."""
    esm2_layers: PosInt = 2
    """Layers of the random ESM-2 (``model=esm2-random``)."""
    esm2_width: PosInt = 32
    """Width of the random ESM-2."""
    esm2_heads: PosInt = 2
    """Attention heads of the random ESM-2."""
    lr: PosFloat = 4e-4
    """TTT learning rate (paper default 4e-4)."""
    ags: PosInt = 16
    """Gradient-accumulation micro-steps per optimiser step (paper 16; gradients are summed)."""
    steps: NonNegInt = 30
    """TTT optimiser steps T (paper 30)."""
    batch_size: PosInt = 2
    """Masked copies per micro-step (paper default 2; ESM-2 configs 4)."""
    mask_ratio: Annotated[float, at.Interval(gt=0, lt=1)] = 0.15
    """Share of residues selected per copy (paper 0.15; 80/10/10 BERT masking)."""
    crop_size: PosInt = 1024
    """Longest crop (tokens) per copy; also the scoring window (clamped to the model's position limit:
    AntiBERTy 512)."""
    loss_kind: Literal["cross_entropy", "unnormalized_cross_entropy"] = "cross_entropy"
    """TTT loss (paper default ``cross_entropy``; its ESM-2 configs use ``unnormalized_cross_entropy``)."""
    optimizer: Literal["sgd", "adamw"] = "sgd"
    """Optimiser (paper SGD, momentum 0, weight decay 0)."""
    lora_rank: NonNegInt = 0
    """LoRA rank (0 = fine-tune everything but the token embeddings; paper's ESMFold config uses 8)."""
    lora_alpha: PosFloat = 32.0
    """LoRA α (paper 32)."""
    lora_scaling: Literal["auto", "reference", "peft"] = "auto"
    """Adapter scale: α (``reference``: the paper's lora_diffusion adapters, tuned with its ESMFold recipe,
    which keeps the best step by pLDDT) or α / r (``peft``). ``auto``: reference for ESM-2 (the paper's
    code path), peft for AntiBERTy (not in the paper; measured on its first README VH chain, one optimiser
    step at lr 8e-4, 16 micro-steps x 2 copies, rank 8: max |Δ logit| 11.6 with α, 1.09 for full fine-tuning,
    0.80 with α / r, so α / r keeps a LoRA step the size of a full one)."""
    replace_vocab: Literal["standard_toks", "amino_acids"] = "standard_toks"
    """Random-replacement tokens of the BERT masking: the vocabulary's non-special tokens (the reference's
    ``standard_toks``) or the 20 amino acids."""
    freeze_embeddings: bool = True
    """Freeze the token-embedding table (paper: yes)."""
    score_every_step: bool = False
    """Score the target's pseudo-perplexity at every optimiser step (L forward passes each; needed by
    ``automatic_best_state_reset`` and ``perplexity_early_stopping``)."""
    automatic_best_state_reset: bool = True
    """The reference's switch (default on): keep the scored state with the lowest pseudo-perplexity (only
    with ``score_every_step``; without scoring θ_T is kept, as the reference's masked LMs do)."""
    perplexity_early_stopping: NonNegFloat = 0.0
    """Stop once the scored pseudo-perplexity falls below this (0 = never)."""
    skip_nonfinite_grads: bool = True
    """Skip an optimiser step whose accumulated gradients hold NaN/Inf (the reference always does)."""
    gradient_clip: bool = False
    """Clip the accumulated gradients' global L2 norm before each step (reference default off)."""
    gradient_clip_max_norm: PosFloat = 1.0
    """The clipping norm (reference 1.0)."""
    lr_scheduler: Literal["none", "cosine", "cosine_warmup"] = "none"
    """Learning-rate schedule over the optimiser steps (reference default none; see ``TTTSettings``)."""
    lr_warmup_steps: NonNegInt = 0
    """Warm-up steps of ``cosine_warmup`` (reference 0)."""
    lr_min: NonNegFloat = 0.0
    """The schedule's final learning rate (reference 0)."""
    sequence_sets: tuple[SequenceSet, ...] = ("antiberty-readme", "esm-readme")
    """Real sequences for the perplexity claim (both ship offline in wheel READMEs)."""
    max_sequences: NonNegInt = 0
    """Use at most this many real sequences (0 = all)."""
    potts_families: NonNegInt = 6
    """Potts families (one wild type each) for the fitness claim (0 = skip it)."""
    potts_length: Annotated[int, at.Interval(ge=8, le=500)] = 32
    """Residues per Potts family."""
    potts_field_scale: PosFloat = 1.5
    """Standard deviation of the Potts fields h."""
    potts_coupling_scale: NonNegFloat = 0.3
    """Standard deviation of the Potts couplings J (local pairs |i−j| <= 2 plus L random long-range pairs)."""
    potts_sweeps: PosInt = 50
    """Gibbs sweeps per sampled sequence."""
    msa_rows: PosInt = 200
    """Sampled family members (the MSA of the controlled check; row 0 of each sample is the wild type)."""
    data_seed: NonNegInt = 0
    """Seed of the Potts families (separate from --seed, so every seed sees the same families)."""
    weak_threshold: float = 0.3
    """A target is "weak" when the base model's Spearman ρ is below this (the paper's claim is about them)."""
    control: bool = True
    """Run the controlled check: TTT on the family's sampled MSA (paper's ``msa=True``), a known-large effect."""
    control_steps: NonNegInt = 30
    """Optimiser steps of the controlled check."""
    control_lr: PosFloat = 1e-2
    """Learning rate of the controlled check."""
    control_batch_size: PosInt = 8
    """MSA rows per micro-step of the controlled check (one micro-step per optimiser step)."""
    perplexity_margin: PosFloat = 0.01
    """Drop of the mean log pseudo-perplexity TTT must reach (claim 1; 0.01 = a 1 % lower perplexity)."""
    spearman_margin: PosFloat = 0.02
    """Mean Spearman gain over weak targets TTT must reach (claim 3; the paper's ESM2-35M gain, 0.02, about
    the seed sd of a family's ρ on half of its mutants)."""
    control_margin: UnitFloat = 0.1
    """Mean Spearman gain the controlled check must reach."""

    def __post_init__(self) -> None:
        validate(self)
        if not self.sequence_sets and self.potts_families == 0:
            raise ConfigError("sequence_sets", self.sequence_sets, "at least one set unless potts_families > 0")
        if len(set(self.sequence_sets)) != len(self.sequence_sets):
            raise ConfigError("sequence_sets", self.sequence_sets, "distinct names")
        if self.model == "esm2-random" and self.esm2_width % self.esm2_heads:
            raise ConfigError("esm2_heads", self.esm2_heads, f"a divisor of esm2_width = {self.esm2_width}")
        if not -1.0 <= self.weak_threshold <= 1.0:
            raise ConfigError("weak_threshold", self.weak_threshold, "a Spearman correlation in [-1, 1]")


#: Quick/smoke scale the paper's 30 × 16 × 2 masked copies down for 2 CPU cores; since the reference code sums
#: (does not average) gradients over the ``ags`` micro-steps, lr × ags is the step size on the mean gradient,
#: so the scaled presets keep the paper's lr × ags = 6.4e-3 (lr 3.2e-3 at ags 2).
PRESETS: dict[str, ProteinTTTConfig] = {
    "smoke": ProteinTTTConfig(
        model="esm2-random",
        lr=3.2e-3,
        ags=2,
        steps=2,
        batch_size=2,
        sequence_sets=("esm-readme",),
        max_sequences=1,
        potts_families=2,
        potts_length=10,
        potts_sweeps=5,
        msa_rows=8,
        control_steps=2,
        control_batch_size=2,
    ),
    "quick": ProteinTTTConfig(lr=3.2e-3, ags=2, steps=10, batch_size=4),
    "full": ProteinTTTConfig(batch_size=4, potts_families=20, potts_length=64, msa_rows=500, control_steps=60),
}
