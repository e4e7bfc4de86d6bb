"""The models of ``crystal-fourier-transformer``, built from its config (paper §3.2; the blocks live in
:mod:`iclr26_science.crystals`): the Crystal Fourier Transformer, its plain-Fourier ablation and the
E(3)-equivariant e3nn baseline."""

from __future__ import annotations

from iclr26_science.crystals.e3nn_baseline import E3nnCrystalNet
from iclr26_science.crystals.encoding import EncodingKind
from iclr26_science.crystals.model import CrystalFourierTransformer
from iclr26_science.methods.crystal_fourier_transformer.config import CrystalFourierTransformerConfig

__all__ = ["CrystalFourierTransformer", "E3nnCrystalNet", "build_cft", "build_e3nn"]


def build_cft(cfg: CrystalFourierTransformerConfig, encoding: EncodingKind) -> CrystalFourierTransformer:
    """The transformer with the symmetry-adapted (``"symmetry"``, the paper) or plain (ablation) encoding."""
    return CrystalFourierTransformer(
        cfg.num_basis, cfg.dim, cfg.depth, cfg.heads, cfg.ff, cfg.dropout, encoding,
        cfg.encoding_hidden, 2, cfg.group_onehot, cfg.head_hidden, cfg.basis_normalization,
    )  # fmt: skip


def build_e3nn(cfg: CrystalFourierTransformerConfig) -> E3nnCrystalNet:
    """The E(3)-equivariant graph baseline."""
    return E3nnCrystalNet(cfg.e3nn_scalars, cfg.e3nn_gated, cfg.e3nn_layers, cutoff=cfg.e3nn_cutoff)
