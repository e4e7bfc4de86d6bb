"""The masked protein LM of a ``protein-ttt`` run and the TTT settings derived from its config."""

from __future__ import annotations

import dataclasses
from typing import Literal

from iclr26_science.methods.protein_ttt.config import ProteinTTTConfig
from iclr26_science.proteins import MaskedLM, TTTSettings, esm2_from_config, load_antiberty, load_esm2

__all__ = ["build_lm", "control_settings", "lora_scaling", "ttt_settings"]


def build_lm(cfg: ProteinTTTConfig, seed: int = 0) -> MaskedLM:
    """AntiBERTy from its wheel, a random ESM-2 of the configured size, or a local pretrained ESM-2."""
    if cfg.model == "antiberty":
        return load_antiberty()
    if cfg.model == "esm2-random":
        return esm2_from_config(cfg.esm2_layers, cfg.esm2_width, cfg.esm2_heads, seed=seed)
    return load_esm2(cfg.model)


def lora_scaling(cfg: ProteinTTTConfig) -> Literal["reference", "peft"]:
    """``cfg.lora_scaling`` with ``auto`` resolved per model (see the field's docstring)."""
    if cfg.lora_scaling != "auto":
        return cfg.lora_scaling
    return "peft" if cfg.model == "antiberty" else "reference"


def ttt_settings(cfg: ProteinTTTConfig, seed: int) -> TTTSettings:
    """The recipe (paper defaults for every switch the config does not name)."""
    return TTTSettings(
        lr=cfg.lr, ags=cfg.ags, steps=cfg.steps, batch_size=cfg.batch_size, mask_ratio=cfg.mask_ratio,
        crop_size=cfg.crop_size, loss_kind=cfg.loss_kind, optimizer=cfg.optimizer, lora_rank=cfg.lora_rank,
        lora_alpha=cfg.lora_alpha, lora_scaling=lora_scaling(cfg), replace_vocab=cfg.replace_vocab,
        freeze_embeddings=cfg.freeze_embeddings, score_every_step=cfg.score_every_step,
        automatic_best_state_reset=cfg.automatic_best_state_reset,
        perplexity_early_stopping=cfg.perplexity_early_stopping, skip_nonfinite_grads=cfg.skip_nonfinite_grads,
        gradient_clip=cfg.gradient_clip, gradient_clip_max_norm=cfg.gradient_clip_max_norm,
        lr_scheduler=cfg.lr_scheduler, lr_warmup_steps=cfg.lr_warmup_steps, lr_min=cfg.lr_min, seed=seed,
    )  # fmt: skip


def control_settings(cfg: ProteinTTTConfig, seed: int) -> TTTSettings:
    """The controlled check's recipe: the same switches, MSA rows, its own steps/lr/batch and ags 1."""
    return dataclasses.replace(
        ttt_settings(cfg, seed), lr=cfg.control_lr, steps=cfg.control_steps, ags=1, batch_size=cfg.control_batch_size
    )
