r"""Positional encodings of fractional coordinates: the space-group-adapted one and the plain one.

``SpaceGroupPositionalEncoding`` (paper §3.2): for an atom at ``x`` in a crystal of group ``G``,

    PE_G(x) = MLP([Re e_O(x), Im e_O(x)]_{O=1..K} ⊕ lattice ⊕ onehot(G)),

with ``e_O`` the invariant basis of :class:`~iclr26_science.crystals.basis.SymmetryAdaptedBasis` (unit-modulus
coefficients by default, as the reference code's ``E(x)·M_G``; ``normalization="orthonormal"`` divides by ``√|O|``).
Only the precomputed basis (and the one-hot input) depends on ``G``; the MLP weights are shared by all
230 groups, so an unseen group only changes the precomputed basis. ``PlaneWaveEncoding`` is the same
MLP on the ``K`` lowest plain plane waves ``e^{i2π ωᵀx}`` (not invariant): the ablation baseline.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from torch import nn

from iclr26_science.crystals.basis import BasisNormalization, SymmetryAdaptedBasis, plane_wave_frequencies

__all__ = [
    "EncodingKind",
    "PlaneWaveEncoding",
    "ResidualMLP",
    "SpaceGroupPositionalEncoding",
    "lattice_features",
    "orbit_features",
]

EncodingKind = Literal["symmetry", "plain"]
NUM_GROUPS = 230
LATTICE_DIM = 6


def lattice_features(lattice: torch.Tensor) -> torch.Tensor:
    """Rotation-invariant lattice descriptors ``[..., 3, 3]`` → ``[..., 6]``: ``(a, b, c)/10 Å`` and the
    cosines of ``(α, β, γ)``. Rows of ``lattice`` are the lattice vectors (pymatgen convention)."""
    lengths = lattice.norm(dim=-1)  # [..., 3]
    a, b, c = lattice.unbind(-2)
    cos = torch.stack(
        [
            (b * c).sum(-1) / (lengths[..., 1] * lengths[..., 2]),
            (a * c).sum(-1) / (lengths[..., 0] * lengths[..., 2]),
            (a * b).sum(-1) / (lengths[..., 0] * lengths[..., 1]),
        ],
        dim=-1,
    )
    return torch.cat([lengths / 10.0, cos], dim=-1)


def orbit_features(
    kind: EncodingKind,
    num_basis: int,
    frac: torch.Tensor,
    groups: torch.Tensor | list[int],
    normalization: BasisNormalization = "unit",
) -> torch.Tensor:
    """Raw encoding inputs ``[B, N, 2K]`` for fractional coordinates ``[B, N, 3]`` and groups ``[B]``.

    ``kind="symmetry"``: Re/Im of the invariant basis of each crystal's group (``normalization`` as in
    :class:`~iclr26_science.crystals.basis.SymmetryAdaptedBasis`); ``"plain"``: Re/Im of the ``K`` lowest
    plane waves (``groups`` and ``normalization`` ignored).
    """
    if frac.ndim != 3 or frac.shape[-1] != 3:
        raise ValueError(f"frac must be [B, N, 3], got {list(frac.shape)}")
    if kind == "plain":
        freqs = torch.as_tensor(plane_wave_frequencies(num_basis), dtype=frac.dtype, device=frac.device)
        angle = 2 * torch.pi * (frac @ freqs.T)
        return torch.cat([torch.cos(angle), torch.sin(angle)], dim=-1)
    if kind != "symmetry":
        raise ValueError(f"unknown encoding kind {kind!r} (choose 'symmetry' or 'plain')")
    group_list = [int(g) for g in (groups.tolist() if isinstance(groups, torch.Tensor) else groups)]
    if len(group_list) != frac.shape[0]:
        raise ValueError(f"{len(group_list)} groups for {frac.shape[0]} crystals")
    out = frac.new_empty(*frac.shape[:-1], 2 * num_basis)
    arr = np.asarray(group_list)
    for g in np.unique(arr):
        idx = torch.as_tensor(np.flatnonzero(arr == g), device=frac.device)
        basis = SymmetryAdaptedBasis(int(g), num_basis, normalization=normalization)
        out[idx] = torch.as_tensor(basis.real_features(frac[idx])).to(frac.dtype)
    return out


class ResidualMLP(nn.Module):
    """``Linear → [LayerNorm → SiLU → Linear (+ residual)] × depth → Linear``: ``[..., d_in] → [..., d_out]``."""

    def __init__(self, d_in: int, hidden: int, d_out: int, depth: int = 2) -> None:
        super().__init__()
        self.inp = nn.Linear(d_in, hidden)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(hidden), nn.SiLU(), nn.Linear(hidden, hidden)) for _ in range(depth)
        )
        self.out = nn.Sequential(nn.LayerNorm(hidden), nn.SiLU(), nn.Linear(hidden, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


class _EncodingMLP(nn.Module):
    kind: EncodingKind = "symmetry"

    def __init__(
        self,
        num_basis: int = 64,
        dim: int = 128,
        hidden: int = 256,
        depth: int = 2,
        group_onehot: bool = True,
        normalization: BasisNormalization = "unit",
    ) -> None:
        super().__init__()
        if num_basis < 1 or dim < 1 or hidden < 1 or depth < 0:
            raise ValueError("num_basis, dim and hidden must be >= 1 and depth >= 0")
        if normalization not in ("unit", "orthonormal"):
            raise ValueError(f"unknown basis normalization {normalization!r} (choose 'unit' or 'orthonormal')")
        self.num_basis = num_basis
        self.normalization: BasisNormalization = normalization
        self.dim = dim
        self.group_onehot = group_onehot
        d_in = 2 * num_basis + LATTICE_DIM + (NUM_GROUPS if group_onehot else 0)
        self.mlp = ResidualMLP(d_in, hidden, dim, depth)

    def features(self, frac: torch.Tensor, groups: torch.Tensor | list[int]) -> torch.Tensor:
        """Raw inputs ``[B, N, 2K]`` (precompute these once per data set; they carry no weights)."""
        return orbit_features(self.kind, self.num_basis, frac, groups, self.normalization)

    def forward(
        self,
        lattice: torch.Tensor,
        groups: torch.Tensor,
        *,
        frac: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Encode atoms: ``lattice [B, 3, 3]``, ``groups [B]`` (1–230), and ``frac [B, N, 3]`` or the
        precomputed ``features [B, N, 2K]`` → ``[B, N, dim]``."""
        if features is None:
            if frac is None:
                raise ValueError("pass frac or features")
            features = self.features(frac, groups)
        parts = [features, lattice_features(lattice)[:, None, :].expand(-1, features.shape[1], -1)]
        if self.group_onehot:
            onehot = nn.functional.one_hot(groups.long() - 1, NUM_GROUPS).to(features.dtype)
            parts.append(onehot[:, None, :].expand(-1, features.shape[1], -1))
        return self.mlp(torch.cat(parts, dim=-1))


class SpaceGroupPositionalEncoding(_EncodingMLP):
    """``PE_G(x)``: MLP on the group's invariant basis values, lattice and group one-hot (``[B, N, dim]``).

    Args:
        num_basis: Number of orbits ``K`` (the input has ``2K`` real features).
        dim: Output width.
        hidden: MLP width.
        depth: Residual blocks.
        group_onehot: Append the 230-way one-hot of ``G`` (as the paper does).
        normalization: Basis normalisation, ``"unit"`` (the reference code's) or ``"orthonormal"``.
    """

    kind: EncodingKind = "symmetry"


class PlaneWaveEncoding(_EncodingMLP):
    """The same MLP on the ``K`` lowest plain plane waves (not invariant; the ablation baseline)."""

    kind: EncodingKind = "plain"
