"""Space-group-invariant crystal networks (Crystal Fourier Transformer, arXiv 2512.13989).

Public API::

    from iclr26_science.crystals import SymmetryAdaptedBasis
    basis = SymmetryAdaptedBasis(225, 64)          # Fm-3m, 64 invariant basis functions
    values = basis(frac)                           # [N, 3] float64 -> [N, 64] complex128

Needs the ``crystals`` extra (e3nn, pymatgen, spglib, pyxtal, ase); without it, importing this package
raises :class:`~iclr26_science._extras.MissingExtraError` naming the extra.
"""

# ruff: noqa: E402  (the extra is checked before the subpackages import its libraries)
from iclr26_science._extras import require

require("crystals", __name__)

from iclr26_science.crystals.basis import SymmetryAdaptedBasis, build_orbits, reynolds_basis
from iclr26_science.crystals.dataset import CrystalDataset, generate_crystals, orbit_crystals, real_crystals
from iclr26_science.crystals.e3nn_baseline import E3nnCrystalNet, GraphBatch, periodic_radius_graph
from iclr26_science.crystals.encoding import PlaneWaveEncoding, SpaceGroupPositionalEncoding
from iclr26_science.crystals.fit import FitSettings, fit
from iclr26_science.crystals.groups import SpaceGroupOps, space_group_ops
from iclr26_science.crystals.model import CrystalBatch, CrystalFourierTransformer
from iclr26_science.crystals.structures import (
    CrystalInput,
    cif_to_input,
    input_to_structure,
    load_materials_project,
    read_cif,
    structure_to_input,
)

__all__ = [
    "CrystalBatch",
    "CrystalDataset",
    "CrystalFourierTransformer",
    "CrystalInput",
    "E3nnCrystalNet",
    "FitSettings",
    "GraphBatch",
    "PlaneWaveEncoding",
    "SpaceGroupOps",
    "SpaceGroupPositionalEncoding",
    "SymmetryAdaptedBasis",
    "build_orbits",
    "cif_to_input",
    "fit",
    "generate_crystals",
    "input_to_structure",
    "load_materials_project",
    "orbit_crystals",
    "periodic_radius_graph",
    "read_cif",
    "real_crystals",
    "reynolds_basis",
    "space_group_ops",
    "structure_to_input",
]
