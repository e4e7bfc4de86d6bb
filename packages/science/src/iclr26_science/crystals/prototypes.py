"""Real structure families (prototypes) of the EMT metals, relaxed under their own symmetry.

Each prototype (Strukturbericht / common name) is a space group, a list of Wyckoff sites, each site
assigned to a *species slot*, and a reference cell (``a, b, c, α, β, γ``); :func:`ase.spacegroup.crystal`
expands the sites by the group's operations. A crystal of the family gets one distinct EMT element per
slot (all ordered choices of distinct elements are enumerated and ``per_family`` drawn without
replacement), the cell scaled so that the volume per atom is the mean fcc volume of its atoms times a
random factor in ``[0.9, 1.1]`` (``volume_jitter``), and then

* ``relax=True`` (default): positions and cell relaxed with ASE's EMT potential under
  ``FixSymmetry`` (the symmetry-constrained forces and stress of the starting group) with a cell
  filter (``cell_filter``: ``UnitCellFilter`` by default, ``FrechetCellFilter`` optional) and BFGS to
  ``fmax`` eV/Å; the label is the relaxed energy per atom. Both filters stop at the same stationary
  point (forces and stress below ``fmax``); the unit-cell filter's linear strain parametrisation
  avoids the matrix logarithm/exponential the Fréchet filter evaluates at every step (the 755 crystals
  of the ``quick`` preset: 105 s vs 152 s; 751 labels agree to 1e-4 eV/atom, 4 CrB crystals settle in
  another local minimum, the path decides which);
  Because ASE's EMT is parametrised so that each element's fcc crystal at its equilibrium lattice
  constant has energy ≈ 0, this label is the EMT *formation energy* of the structure relative to the
  elemental fcc references: it depends on the family (coordination, packing, the free Wyckoff
  parameters and axial ratios the relaxation settles) and on which element sits on which site;
* ``relax=False``: the EMT energy per atom at the jittered starting cell (a strain-energy label).

Every crystal is then standardised by :func:`~iclr26_science.crystals.structures.structure_to_input`
and labelled with the group spglib detects (a relaxation may raise the symmetry, e.g. wurtzite with
``u → 1/2`` becomes P6_3/mmc; the detected group is what the models see and what the hold-out uses).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from iclr26_science.crystals.structures import CrystalInput, structure_to_input
from iclr26_shared.errors import DataError

__all__ = ["PROTOTYPES", "CellFilter", "Prototype", "build_prototype", "prototype_crystals", "relax_under_symmetry"]

#: ASE cell filter of the symmetry-constrained relaxation: ``unit`` = ``UnitCellFilter`` (strain ε with
#: cell ``(I + ε) h₀``), ``frechet`` = ``FrechetCellFilter`` (cell ``exp(ε) h₀``, needs ``logm``/``expm``).
CellFilter = Literal["unit", "frechet"]

#: fcc lattice constants (Å) of the EMT metals (ASE's reference states), for the starting volumes.
FCC_A: dict[str, float] = {"Al": 4.05, "Ni": 3.52, "Cu": 3.61, "Pd": 3.89, "Ag": 4.09, "Pt": 3.92, "Au": 4.08}


@dataclass(frozen=True)
class Prototype:
    """One structure family.

    Attributes:
        name: Family name (Strukturbericht symbol and example compound).
        group: Space group of the ideal prototype (International number; ASE's default setting).
        sites: ``(slot, (x, y, z))`` Wyckoff representatives; ``slot`` indexes the species.
        cellpar: Reference ``(a, b, c, α, β, γ)`` (Å, degrees); only the ratios matter (rescaled).
    """

    name: str
    group: int
    sites: tuple[tuple[int, tuple[float, float, float]], ...]
    cellpar: tuple[float, float, float, float, float, float]

    @property
    def slots(self) -> int:
        """Number of distinct species."""
        return 1 + max(s for s, _ in self.sites)


def _cub(a: float = 1.0) -> tuple[float, float, float, float, float, float]:
    return (a, a, a, 90.0, 90.0, 90.0)


def _hex(c_over_a: float) -> tuple[float, float, float, float, float, float]:
    return (1.0, 1.0, c_over_a, 90.0, 90.0, 120.0)


def _tet(c_over_a: float) -> tuple[float, float, float, float, float, float]:
    return (1.0, 1.0, c_over_a, 90.0, 90.0, 90.0)


_H = 0.5
_Q = 0.25
#: The families, keyed by name (every name is a choice of the config's ``families``).
PROTOTYPES: dict[str, Prototype] = {
    p.name: p
    for p in (
        # cubic
        Prototype("A1-Cu", 225, ((0, (0, 0, 0)),), _cub()),
        Prototype("A2-W", 229, ((0, (0, 0, 0)),), _cub()),
        Prototype("Ah-Po", 221, ((0, (0, 0, 0)),), _cub()),
        Prototype("A4-C", 227, ((0, (0, 0, 0)),), _cub()),
        Prototype("B1-NaCl", 225, ((0, (0, 0, 0)), (1, (_H, _H, _H))), _cub()),
        Prototype("B2-CsCl", 221, ((0, (0, 0, 0)), (1, (_H, _H, _H))), _cub()),
        Prototype("B3-ZnS", 216, ((0, (0, 0, 0)), (1, (_Q, _Q, _Q))), _cub()),
        Prototype("C1-CaF2", 225, ((0, (0, 0, 0)), (1, (_Q, _Q, _Q))), _cub()),
        Prototype("C1b-MgAgAs", 216, ((0, (0, 0, 0)), (1, (_H, _H, _H)), (2, (_Q, _Q, _Q))), _cub()),
        Prototype("L12-Cu3Au", 221, ((0, (0, 0, 0)), (1, (0, _H, _H))), _cub()),
        Prototype("D03-BiF3", 225, ((0, (0, 0, 0)), (1, (_H, _H, _H)), (1, (_Q, _Q, _Q))), _cub()),
        Prototype("L21-Cu2MnAl", 225, ((0, (0, 0, 0)), (1, (_H, _H, _H)), (2, (_Q, _Q, _Q))), _cub()),
        Prototype("E21-CaTiO3", 221, ((0, (0, 0, 0)), (1, (_H, _H, _H)), (2, (_H, _H, 0))), _cub()),
        Prototype("D09-ReO3", 221, ((0, (0, 0, 0)), (1, (_H, 0, 0))), _cub()),
        Prototype("C15-MgCu2", 227, ((0, (0, 0, 0)), (1, (5 / 8, 5 / 8, 5 / 8))), _cub()),
        Prototype("A15-Cr3Si", 223, ((0, (0, 0, 0)), (1, (_Q, 0, _H))), _cub()),
        # hexagonal
        Prototype("A3-Mg", 194, ((0, (1 / 3, 2 / 3, _Q)),), _hex(1.633)),
        Prototype("B81-NiAs", 194, ((0, (0, 0, 0)), (1, (1 / 3, 2 / 3, _Q))), _hex(1.39)),
        Prototype("D019-Ni3Sn", 194, ((0, (1 / 3, 2 / 3, _Q)), (1, (5 / 6, 2 / 3, _Q))), _hex(0.8)),
        Prototype("B4-ZnO", 186, ((0, (1 / 3, 2 / 3, 0)), (1, (1 / 3, 2 / 3, 3 / 8))), _hex(1.633)),
        Prototype("C32-AlB2", 191, ((0, (0, 0, 0)), (1, (1 / 3, 2 / 3, _H))), _hex(1.08)),
        Prototype("D2d-CaCu5", 191, ((0, (0, 0, 0)), (1, (1 / 3, 2 / 3, 0)), (1, (_H, 0, _H))), _hex(0.8)),
        # trigonal (hexagonal axes)
        Prototype("C6-CdI2", 164, ((0, (0, 0, 0)), (1, (1 / 3, 2 / 3, _Q))), _hex(1.6)),
        Prototype("L11-CuPt", 166, ((0, (0, 0, 0)), (1, (0, 0, _H))), _hex(4.9)),
        # tetragonal
        Prototype("L10-CuAu", 123, ((0, (0, 0, 0)), (1, (_H, _H, _H))), _tet(1.41)),
        Prototype("C11b-MoSi2", 139, ((0, (0, 0, 0)), (1, (0, 0, 1 / 3))), _tet(2.45)),
        Prototype("D022-TiAl3", 139, ((0, (0, 0, 0)), (1, (0, 0, _H)), (1, (0, _H, _Q))), _tet(2.0)),
        Prototype("C4-TiO2", 136, ((0, (0, 0, 0)), (1, (0.305, 0.305, 0))), _tet(0.644)),
        # orthorhombic
        Prototype("Bf-CrB", 63, ((0, (0, 0.146, _Q)), (1, (0, 0.440, _Q))), (2.97, 7.86, 2.93, 90, 90, 90)),
    )
}


def build_prototype(proto: Prototype, species: Sequence[str], volume_per_atom: float) -> Any:
    """ASE ``Atoms`` of ``proto`` with ``species[slot]`` on each site, scaled to ``volume_per_atom`` Å³."""
    from ase.spacegroup import crystal

    if len(species) != proto.slots:
        raise DataError(f"prototype {proto.name}: needs {proto.slots} species, got {list(species)}")
    symbols = [species[s] for s, _ in proto.sites]
    basis = [xyz for _, xyz in proto.sites]
    atoms = crystal(symbols, basis, spacegroup=proto.group, cellpar=list(proto.cellpar), primitive_cell=False)
    scale = (volume_per_atom * len(atoms) / atoms.get_volume()) ** (1 / 3)
    atoms.set_cell(np.asarray(atoms.cell) * scale, scale_atoms=True)
    return atoms


def relax_under_symmetry(
    atoms: Any, *, fmax: float = 0.01, steps: int = 300, cell_filter: CellFilter = "unit"
) -> tuple[Any, float, bool]:
    """Relax positions and cell with EMT under ``FixSymmetry`` (BFGS on the ``cell_filter`` view).

    Converged when every generalised force (atomic forces, and the stress times the cell volume per
    filter DOF) is below ``fmax``, i.e. at a stationary point ``∂E/∂x = 0, σ = 0`` of the
    symmetry-constrained energy; the filter only changes the path (``unit``: cell ``(I + ε) h₀``;
    ``frechet``: ``exp(ε) h₀``). Returns the relaxed ``Atoms``, the EMT energy per atom (eV/atom) and
    whether ``fmax`` was reached."""
    from ase.calculators.emt import EMT
    from ase.constraints import FixSymmetry
    from ase.filters import FrechetCellFilter, UnitCellFilter
    from ase.optimize import BFGS

    if cell_filter not in ("unit", "frechet"):
        raise ValueError(f"cell_filter must be 'unit' or 'frechet', got {cell_filter!r}")
    filter_cls = UnitCellFilter if cell_filter == "unit" else FrechetCellFilter

    atoms = atoms.copy()
    atoms.calc = EMT()
    atoms.set_constraint(FixSymmetry(atoms, symprec=1e-3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's logm accuracy notes from the cell filter
        view: Any = filter_cls(atoms)  # an Atoms-like view of positions + cell (ase's stub says Atoms)
        opt = BFGS(view, logfile=None)
        converged = bool(opt.run(fmax=fmax, steps=steps))
    energy = float(atoms.get_potential_energy()) / len(atoms)
    atoms.set_constraint()
    return atoms, energy, converged


def prototype_crystals(
    families: Sequence[str],
    per_family: int,
    *,
    seed: int = 0,
    elements: Sequence[str] = tuple(FCC_A),
    relax: bool = True,
    volume_jitter: float = 0.1,
    fmax: float = 0.01,
    max_energy: float = 3.0,
    max_atoms: int = 48,
    cell_filter: CellFilter = "unit",
) -> tuple[list[CrystalInput], np.ndarray, list[str]]:
    """``per_family`` crystals of each family (fewer when the family has fewer species choices).

    Returns the standardised crystals, their EMT energies per atom ``[S]`` (relaxed under symmetry, or
    at the jittered start with ``relax=False``) and each crystal's family name."""
    from pymatgen.io.ase import AseAtomsAdaptor

    from iclr26_science.crystals.dataset import emt_energy_per_atom

    unknown = [f for f in families if f not in PROTOTYPES]
    if unknown:
        raise DataError(f"unknown prototype families {unknown} (choose from {', '.join(PROTOTYPES)})")
    bad = [e for e in elements if e not in FCC_A]
    if bad:
        raise DataError(f"elements {bad} have no EMT parameters (choose from {', '.join(FCC_A)})")
    rng = np.random.default_rng(seed)
    crystals: list[CrystalInput] = []
    energies: list[float] = []
    names: list[str] = []
    for name in families:
        proto = PROTOTYPES[name]
        choices = list(itertools.permutations(elements, proto.slots))
        picks = rng.permutation(len(choices))[:per_family]
        for k in picks:
            species = choices[int(k)]
            jitter = float(rng.uniform(1 - volume_jitter, 1 + volume_jitter))
            symbols = [species[s] for s, _ in proto.sites]
            v0 = float(np.mean([FCC_A[e] ** 3 / 4 for e in symbols]))
            atoms = build_prototype(proto, species, v0 * jitter)
            if relax:
                atoms, energy, _ = relax_under_symmetry(atoms, fmax=fmax, cell_filter=cell_filter)
            else:
                from ase.calculators.emt import EMT

                atoms.calc = EMT()
                energy = float(atoms.get_potential_energy()) / len(atoms)
            if not np.isfinite(energy) or energy > max_energy:
                continue
            structure = AseAtomsAdaptor.get_structure(atoms)
            try:
                crystal = structure_to_input(structure, where=f"prototype {name} {'-'.join(species)}")
            except DataError:
                continue
            if crystal.num_atoms > max_atoms:
                continue
            energy = emt_energy_per_atom(crystal)  # of the standardised (symmetrised) cell the models see
            crystals.append(crystal)
            energies.append(energy)
            names.append(name)
    if not crystals:
        raise DataError(f"no valid crystal for the prototype families {list(families)}")
    return crystals, np.array(energies), names
