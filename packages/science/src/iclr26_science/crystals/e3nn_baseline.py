r"""Baseline: an E(3)-equivariant interatomic network (e3nn) on the periodic radius graph.

Edges join atom ``i`` to every periodic image of atom ``j`` within ``cutoff`` Å (ASE neighbour list),
with edge vector ``r_ij = p_j + S_ij L − p_i``. One interaction layer (NequIP-style gated convolution):

    m_i = (1/√n̄) Σ_j  TP_{w(|r_ij|)}( h_j , Y(r_ij/|r_ij|) )       Y: spherical harmonics, l ≤ lmax
    h_i ← Gate( Linear(h_i) + m_i )

with the tensor-product weights ``w`` an MLP of a smooth radial basis of ``|r_ij|`` that vanishes at the
cutoff. After the last layer the scalar channel is read out per atom and averaged per crystal → ``[B]``.
Outputs are invariant under rotations, reflections and translations of the whole crystal and under
the choice of unit cell (same neighbour multiset).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

__all__ = ["E3nnCrystalNet", "GraphBatch", "periodic_radius_graph"]


def periodic_radius_graph(frac: np.ndarray, lattice: np.ndarray, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """Edges of the periodic radius graph: ``edge_index int64 [2, E]`` (source j, target i) and
    ``edge_vec float64 [E, 3]`` (Cartesian ``r_ij``, Å), self-images of an atom included."""
    from ase import Atoms
    from ase.neighborlist import neighbor_list

    atoms = Atoms(numbers=np.ones(len(frac), dtype=int), scaled_positions=frac, cell=lattice, pbc=True)
    i, j, shift = neighbor_list("ijS", atoms, cutoff)
    pos = atoms.get_positions()
    vec = pos[j] + shift @ np.asarray(lattice) - pos[i]
    return np.stack([j, i]).astype(np.int64), vec


@dataclass
class GraphBatch:
    """Crystals as one disjoint graph.

    Attributes:
        species: ``int64 [A]`` atomic numbers.
        edge_index: ``int64 [2, E]`` (source, target) atom indices.
        edge_vec: ``float [E, 3]`` Cartesian edge vectors.
        crystal: ``int64 [A]`` crystal index of each atom.
        num_crystals: ``B``.
    """

    species: torch.Tensor
    edge_index: torch.Tensor
    edge_vec: torch.Tensor
    crystal: torch.Tensor
    num_crystals: int

    def to(self, device: torch.device | str) -> GraphBatch:
        """The batch on ``device``."""
        return GraphBatch(
            self.species.to(device),
            self.edge_index.to(device),
            self.edge_vec.to(device),
            self.crystal.to(device),
            self.num_crystals,
        )


class _Interaction(nn.Module):
    def __init__(
        self,
        irreps_in: object,
        irreps_sh: object,
        scalars: int,
        gated: str,
        num_radial: int,
        radial_hidden: int,
        avg_neighbors: float,
    ) -> None:
        super().__init__()
        from e3nn import o3
        from e3nn.nn import FullyConnectedNet, Gate

        gated_irreps = o3.Irreps(gated)
        self.gate = Gate(
            o3.Irreps(f"{scalars}x0e"),
            [nn.functional.silu],
            o3.Irreps(f"{sum(mul for mul, _ in gated_irreps)}x0e"),
            [torch.sigmoid],
            gated_irreps,
        )
        irreps_mid = self.gate.irreps_in
        self.tp = o3.FullyConnectedTensorProduct(irreps_in, irreps_sh, irreps_mid, shared_weights=False)
        self.radial = FullyConnectedNet([num_radial, radial_hidden, self.tp.weight_numel], nn.functional.silu)
        self.self_interaction = o3.Linear(irreps_in, irreps_mid)
        self.avg_neighbors = avg_neighbors
        self.irreps_out = self.gate.irreps_out

    def forward(
        self, h: torch.Tensor, sh: torch.Tensor, radial: torch.Tensor, edge_index: torch.Tensor
    ) -> torch.Tensor:
        src, dst = edge_index
        msg = self.tp(h[src], sh, self.radial(radial))
        agg = torch.zeros(h.shape[0], msg.shape[1], dtype=msg.dtype, device=msg.device).index_add_(0, dst, msg)
        return self.gate(self.self_interaction(h) + agg / self.avg_neighbors**0.5)


class E3nnCrystalNet(nn.Module):
    """E(3)-equivariant crystal property regressor ``GraphBatch → [B]``.

    Args:
        scalars: Scalar (``0e``) channels of the hidden features.
        gated: Non-scalar hidden irreps, e.g. ``"8x1o+8x2e"``.
        layers: Interaction layers.
        lmax: Largest degree of the edge spherical harmonics.
        cutoff: Radius of the graph (Å).
        num_radial: Radial basis size.
        radial_hidden: Width of the radial MLP.
        avg_neighbors: Normalisation ``n̄`` of the message sum.
    """

    def __init__(
        self,
        scalars: int = 32,
        gated: str = "8x1o+8x2e",
        layers: int = 3,
        lmax: int = 2,
        cutoff: float = 4.5,
        num_radial: int = 8,
        radial_hidden: int = 32,
        avg_neighbors: float = 30.0,
    ) -> None:
        super().__init__()
        from e3nn import o3

        self.cutoff = cutoff
        self.num_radial = num_radial
        self.irreps_sh = o3.Irreps.spherical_harmonics(lmax)
        self.embed = nn.Embedding(101, scalars)
        irreps: object = o3.Irreps(f"{scalars}x0e")
        self.layers = nn.ModuleList()
        for _ in range(layers):
            layer = _Interaction(irreps, self.irreps_sh, scalars, gated, num_radial, radial_hidden, avg_neighbors)
            self.layers.append(layer)
            irreps = layer.irreps_out
        self.readout = o3.Linear(irreps, o3.Irreps("16x0e"))
        self.head = nn.Sequential(nn.SiLU(), nn.Linear(16, 1))

    def forward(self, batch: GraphBatch) -> torch.Tensor:
        """Predicted property per crystal, ``[B]``."""
        from e3nn import o3
        from e3nn.math import soft_one_hot_linspace

        length = batch.edge_vec.norm(dim=-1)
        sh = o3.spherical_harmonics(self.irreps_sh, batch.edge_vec, normalize=True, normalization="component")
        radial = (
            soft_one_hot_linspace(length, 0.0, self.cutoff, self.num_radial, basis="smooth_finite", cutoff=True)
            * self.num_radial**0.5
        )
        h = self.embed(batch.species)
        for layer in self.layers:
            h = layer(h, sh, radial, batch.edge_index)
        per_atom = self.head(self.readout(h)).squeeze(-1)
        total = torch.zeros(batch.num_crystals, dtype=per_atom.dtype, device=per_atom.device)
        total.index_add_(0, batch.crystal, per_atom)
        count = torch.bincount(batch.crystal, minlength=batch.num_crystals).clamp_min(1)
        return total / count.to(per_atom.dtype)
