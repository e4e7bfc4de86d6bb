r"""Crystal Fourier Transformer (paper §3.2): atom embedding + group-adapted encoding + pre-LN transformer.

For a crystal with ``N`` atoms (species ``Z_i``, fractional coordinates ``x_i``, lattice ``L``, group ``G``):

    h_i⁰ = Emb(Z_i) + PE_G(x_i)                         [B, N, d]
    h^{l+1} = h^l + MHSA(LN(h^l));  h^{l+1} += FFN_SiLU(LN(h^{l+1}))   (pre-LN, padding masked)
    y = Head(Σ_i m_i h_i / Σ_i m_i)                      [B]

``Head`` is the reference implementation's ``FeedForward``: ``Linear(d, 2048) → SiLU → LN → Linear(2048,
256) → SiLU → LN → Linear(256, 1)`` (paper §3.2 / Appendix, "2048→256→1").

Because ``PE_G`` is invariant under every operation of ``G`` and under lattice translations, and the
rest is permutation invariant, ``y`` is invariant under any symmetry operation applied to any atom.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from iclr26_science.crystals.basis import BasisNormalization
from iclr26_science.crystals.encoding import (
    EncodingKind,
    PlaneWaveEncoding,
    SpaceGroupPositionalEncoding,
)

__all__ = ["CrystalBatch", "CrystalFourierTransformer", "TransformerBlock", "output_head"]

MAX_Z = 100


@dataclass
class CrystalBatch:
    """A padded batch of crystals.

    Attributes:
        species: ``int64 [B, N]`` atomic numbers, 0 for padding.
        frac: ``float [B, N, 3]`` fractional coordinates.
        lattice: ``float [B, 3, 3]`` lattice vectors as rows (Å).
        group: ``int64 [B]`` space-group numbers.
        features: optional precomputed encoding inputs ``[B, N, 2K]``.
    """

    species: torch.Tensor
    frac: torch.Tensor
    lattice: torch.Tensor
    group: torch.Tensor
    features: torch.Tensor | None = None

    @property
    def mask(self) -> torch.Tensor:
        """``bool [B, N]`` real atoms."""
        return self.species > 0

    def to(self, device: torch.device | str) -> CrystalBatch:
        """The batch on ``device``."""
        f = None if self.features is None else self.features.to(device)
        return CrystalBatch(
            self.species.to(device), self.frac.to(device), self.lattice.to(device), self.group.to(device), f
        )


class TransformerBlock(nn.Module):
    """Pre-LN block: ``x + MHSA(LN x)``, then ``+ FFN(LN ·)`` with SiLU; ``[B, N, d]`` → ``[B, N, d]``."""

    def __init__(self, dim: int, heads: int, ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, ff), nn.SiLU(), nn.Dropout(dropout), nn.Linear(ff, dim))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        """``pad``: ``bool [B, N]``, True at padding positions (keys ignored)."""
        h = self.norm1(x)
        x = x + self.drop(self.attn(h, h, h, key_padding_mask=pad, need_weights=False)[0])
        return x + self.drop(self.ffn(self.norm2(x)))


def output_head(dim: int, hidden: Sequence[int] = (2048, 256)) -> nn.Sequential:
    """``[Linear → SiLU → LayerNorm]`` per hidden width, then ``Linear(·, 1)``: ``[B, dim] → [B, 1]``."""
    layers: list[nn.Module] = []
    width = dim
    for h in hidden:
        layers += [nn.Linear(width, h), nn.SiLU(), nn.LayerNorm(h, eps=1e-6)]
        width = h
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


class CrystalFourierTransformer(nn.Module, PyTorchModelHubMixin):
    """Property regressor ``CrystalBatch → [B]`` with weights shared across all 230 space groups.

    ``forward`` gives the standardised target; the buffers ``target_mean`` / ``target_std`` (set by the
    training code, saved with the weights) turn it into the property's units in :meth:`predict`, which takes
    pymatgen ``Structure`` s (or :class:`~iclr26_science.crystals.structures.CrystalInput` s). Saved and loaded
    with ``save_pretrained(dir)`` / ``CrystalFourierTransformer.from_pretrained(dir)`` (huggingface_hub).

    Args:
        num_basis: Orbits ``K`` of the positional encoding.
        dim: Model width (paper 128).
        depth: Transformer blocks (paper 4).
        heads: Attention heads (paper 4).
        ff: FFN width (paper 512).
        dropout: Dropout in the blocks.
        encoding: ``"symmetry"`` (the paper) or ``"plain"`` plane waves (ablation).
        encoding_hidden: Width of the encoding MLP.
        encoding_depth: Residual blocks of the encoding MLP.
        group_onehot: Feed the 230-way one-hot of ``G`` to the encoding MLP.
        head_hidden: Hidden widths of the output head (paper: 2048, 256).
        basis_normalization: ``"unit"`` (the reference code's unit-modulus orbit sums, default) or
            ``"orthonormal"`` (divided by ``√|O|``; models saved before this switch existed were trained with
            it, and :meth:`from_pretrained` reads a ``config.json`` without the key as ``"orthonormal"``).
    """

    target_mean: torch.Tensor
    target_std: torch.Tensor

    def __init__(
        self,
        num_basis: int = 64,
        dim: int = 128,
        depth: int = 4,
        heads: int = 4,
        ff: int = 512,
        dropout: float = 0.0,
        encoding: EncodingKind = "symmetry",
        encoding_hidden: int = 256,
        encoding_depth: int = 2,
        group_onehot: bool = True,
        head_hidden: Sequence[int] = (2048, 256),
        basis_normalization: BasisNormalization = "unit",
    ) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} must be divisible by heads {heads}")
        enc_cls = SpaceGroupPositionalEncoding if encoding == "symmetry" else PlaneWaveEncoding
        if encoding not in ("symmetry", "plain"):
            raise ValueError(f"unknown encoding {encoding!r} (choose 'symmetry' or 'plain')")
        self.encoding = enc_cls(num_basis, dim, encoding_hidden, encoding_depth, group_onehot, basis_normalization)
        self.embed = nn.Embedding(MAX_Z + 1, dim, padding_idx=0)
        self.blocks = nn.ModuleList(TransformerBlock(dim, heads, ff, dropout) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = output_head(dim, tuple(head_hidden))
        self.register_buffer("target_mean", torch.zeros((), dtype=torch.float64))
        self.register_buffer("target_std", torch.ones((), dtype=torch.float64))
        #: Per-epoch rows of the :func:`~iclr26_science.crystals.fit.fit` that made it (not saved).
        self.history: list[dict[str, Any]] = []

    @classmethod
    def _from_pretrained(cls, **kwargs: Any) -> CrystalFourierTransformer:  # pyright: ignore[reportIncompatibleMethodOverride]
        # a config.json written before basis_normalization existed: those models used the orthonormal basis
        kwargs.setdefault("basis_normalization", "orthonormal")
        return super()._from_pretrained(**kwargs)  # pyright: ignore[reportCallIssue]

    def forward(self, batch: CrystalBatch) -> torch.Tensor:
        """Predicted property per crystal, ``[B]``."""
        mask = batch.mask
        pe = self.encoding(batch.lattice, batch.group, frac=batch.frac, features=batch.features)
        h = self.embed(batch.species) + pe
        for block in self.blocks:
            h = block(h, ~mask)
        h = self.norm(h)
        m = mask.to(h.dtype)[..., None]
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled).squeeze(-1)

    def set_target_scale(self, mean: float, std: float) -> None:
        """Record the training targets' mean and standard deviation (what :meth:`predict` un-standardises by)."""
        self.target_mean.fill_(float(mean))
        self.target_std.fill_(float(std))

    @overload
    def predict(self, structures: CrystalBatch, *, batch_size: int = 64) -> torch.Tensor: ...
    @overload
    def predict(self, structures: Sequence[object], *, batch_size: int = 64) -> np.ndarray: ...
    def predict(
        self, structures: Sequence[object] | CrystalBatch, *, batch_size: int = 64
    ) -> np.ndarray | torch.Tensor:
        """The property of each crystal, ``[S]`` float64 in the training targets' units, as what went in:
        a numpy array for a list of structures (as the targets went into :func:`~iclr26_science.crystals.fit.fit`),
        a torch tensor (on the model's device) for a :class:`CrystalBatch`.

        ``structures``: pymatgen ``Structure`` s (symmetry detected and refined to the standard conventional
        cell, as in training) or :class:`~iclr26_science.crystals.structures.CrystalInput` s; or a batch.
        """
        from iclr26_science.crystals.fit import as_inputs, batch_of

        device = self.target_mean.device
        was = self.training
        self.eval()
        try:
            with torch.no_grad():
                if isinstance(structures, CrystalBatch):
                    return self(structures.to(device)).double() * self.target_std + self.target_mean
                inputs = as_inputs(structures)
                out = [
                    self(batch_of(inputs[s : s + batch_size]).to(device)).double() * self.target_std + self.target_mean
                    for s in range(0, len(inputs), batch_size)
                ]
        finally:
            self.train(was)
        return torch.cat(out).cpu().numpy() if out else np.zeros(0, dtype=np.float64)
