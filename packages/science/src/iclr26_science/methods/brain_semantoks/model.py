"""Builders of the ``brain-semantoks`` networks from its config (the modules live in :mod:`iclr26_science.fmri`)."""

from __future__ import annotations

from collections.abc import Sequence

from iclr26_science.fmri import MaskedAutoencoder, SemantoksEncoder, SemantoksPretrainer
from iclr26_science.methods.brain_semantoks.config import BrainSemantoksConfig

__all__ = ["build_encoder", "build_mae", "build_pretrainer"]


def build_encoder(cfg: BrainSemantoksConfig, groups: Sequence[Sequence[int]]) -> SemantoksEncoder:
    """Semantic tokenizer + inter-network transformer for crops of ``cfg.crop`` samples (recording the
    preprocessing: ``cfg.tr`` and the band)."""
    return SemantoksEncoder(
        groups, dim=cfg.dim, depth=cfg.depth, heads=cfg.heads, patch=cfg.patch, patches=cfg.crop // cfg.patch,
        sl_kernel=cfg.sl_kernel, sl_scales=cfg.sl_scales, tokenizer=cfg.tokenizer,
        qkv_bias=cfg.qkv_bias, mask_std=cfg.mask_token_std, tr=cfg.tr, band_low=cfg.band_low,
        band_high=cfg.band_high,
    )  # fmt: skip


def build_pretrainer(cfg: BrainSemantoksConfig, groups: Sequence[Sequence[int]]) -> SemantoksPretrainer:
    """Student, projection head and their EMA teacher."""
    return SemantoksPretrainer(
        build_encoder(cfg, groups), head_hidden=cfg.head_hidden, proj_dim=cfg.proj_dim, eps=cfg.eps,
        coeff=cfg.align_coeff, token_weight=cfg.token_weight,
    )  # fmt: skip


def build_mae(cfg: BrainSemantoksConfig, n_rois: int) -> MaskedAutoencoder:
    """The BrainLM-style baseline at the same width and depth."""
    return MaskedAutoencoder(
        n_rois, dim=cfg.dim, depth=cfg.depth, heads=cfg.heads, patch=cfg.patch, patches=cfg.crop // cfg.patch,
        decoder_depth=cfg.mae_decoder_depth, mask_ratio=cfg.mae_mask_ratio,
    )  # fmt: skip
