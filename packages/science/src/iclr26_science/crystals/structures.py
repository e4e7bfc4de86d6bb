"""Crystal structures → model inputs: pymatgen ``Structure`` / CIF files / Materials Project (opt-in).

:func:`structure_to_input` finds the space group with pymatgen's ``SpacegroupAnalyzer`` at a stated
tolerance (``symprec`` Å, ``angle_tolerance`` degrees) and returns the *refined* conventional cell in
the standard setting: the setting of ``SpaceGroup.from_int_number`` and hence of the precomputed basis
(checked: every operation of the group maps the atoms onto atoms of the same species).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iclr26_science.crystals.groups import check_group_number, space_group_ops
from iclr26_shared.errors import DataError

if TYPE_CHECKING:
    from pymatgen.core import Structure

__all__ = [
    "DEFAULT_ANGLE_TOLERANCE",
    "DEFAULT_SYMPREC",
    "CrystalInput",
    "cif_to_input",
    "input_to_structure",
    "load_materials_project",
    "read_cif",
    "structure_to_input",
    "symmetry_mismatch",
]

#: SpacegroupAnalyzer distance tolerance (Å) used throughout.
DEFAULT_SYMPREC = 0.01
#: SpacegroupAnalyzer angle tolerance (degrees).
DEFAULT_ANGLE_TOLERANCE = 5.0
MAX_Z = 100


@dataclass(frozen=True)
class CrystalInput:
    """One crystal as the models read it (conventional standard cell).

    Attributes:
        species: ``int64 [N]`` atomic numbers, 1–100.
        frac: ``float64 [N, 3]`` fractional coordinates in ``[0, 1)``.
        lattice: ``float64 [3, 3]`` lattice vectors as rows (Å).
        space_group: Detected international number, 1–230.
    """

    species: np.ndarray
    frac: np.ndarray
    lattice: np.ndarray
    space_group: int

    def __post_init__(self) -> None:
        check_group_number(self.space_group, "space_group")
        n = len(self.species)
        if self.species.ndim != 1 or n == 0:
            raise DataError(f"crystal input: species must be a non-empty [N] array, got {self.species.shape}")
        if self.frac.shape != (n, 3) or not np.isfinite(self.frac).all():
            raise DataError(f"crystal input: frac must be finite [{n}, 3], got {self.frac.shape}")
        if self.lattice.shape != (3, 3) or abs(float(np.linalg.det(self.lattice))) < 1e-6:
            raise DataError("crystal input: lattice must be a [3, 3] matrix with non-zero volume")
        if self.species.min() < 1 or self.species.max() > MAX_Z:
            raise DataError(f"crystal input: atomic numbers must lie in 1-{MAX_Z}")

    @property
    def num_atoms(self) -> int:
        """``N``."""
        return len(self.species)


def _check_structure(structure: Any, where: str) -> None:
    from pymatgen.core import Structure

    if not isinstance(structure, Structure):
        raise DataError(f"{where}: expected a pymatgen Structure, got {type(structure).__name__}")
    if len(structure) == 0:
        raise DataError(f"{where}: the structure has no sites")
    if not structure.is_ordered:
        raise DataError(f"{where}: partial occupancies are not supported (the structure is disordered)")
    volume = abs(float(np.linalg.det(structure.lattice.matrix)))
    if not np.isfinite(volume) or volume < 1e-3:
        raise DataError(f"{where}: the lattice has zero volume ({volume:.3g} Å³)")
    for site in structure:
        z = getattr(site.specie, "Z", None)
        if not isinstance(z, int) or not 1 <= z <= MAX_Z:
            raise DataError(f"{where}: unknown element {site.specie!s} (atomic numbers 1-{MAX_Z} only)")


def symmetry_mismatch(inp: CrystalInput, tol: float = 1e-3) -> float:
    """Largest distance (fractional, periodic) from an operation's image of an atom to the nearest atom
    of the same species; 0 when the crystal is invariant under every operation of its group."""
    ops = space_group_ops(inp.space_group)
    images = ops.apply(inp.frac)  # [G, N, 3]
    diff = images[:, :, None, :] - inp.frac[None, None, :, :]  # [G, N, N, 3]
    diff -= np.rint(diff)
    dist = np.abs(diff).max(-1)
    same = inp.species[:, None] == inp.species[None, :]
    dist = np.where(same[None], dist, np.inf)
    return float(dist.min(-1).max())


def structure_to_input(
    structure: Structure,
    *,
    symprec: float = DEFAULT_SYMPREC,
    angle_tolerance: float = DEFAULT_ANGLE_TOLERANCE,
    where: str = "structure",
) -> CrystalInput:
    """Detect the space group and return the refined conventional cell in the standard setting.

    Raises :class:`DataError` (naming ``where``) for disordered structures, zero-volume lattices,
    unknown elements, or a symmetry search that fails.
    """
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    _check_structure(structure, where)
    try:
        sga = SpacegroupAnalyzer(structure, symprec=symprec, angle_tolerance=angle_tolerance)
        refined = sga.get_refined_structure()
        number = int(sga.get_space_group_number())
    except Exception as err:  # spglib signals failure with several exception types
        raise DataError(f"{where}: symmetry search failed at symprec={symprec} ({err})") from None
    frac = np.mod(np.asarray(refined.frac_coords, dtype=np.float64), 1.0)
    frac[np.isclose(frac, 1.0, atol=1e-12)] = 0.0
    inp = CrystalInput(
        species=np.array([site.specie.Z for site in refined], dtype=np.int64),
        frac=frac,
        lattice=np.asarray(refined.lattice.matrix, dtype=np.float64),
        space_group=number,
    )
    mismatch = symmetry_mismatch(inp)
    if mismatch > max(10 * symprec / max(refined.lattice.abc), 1e-4):
        raise DataError(f"{where}: refined cell is not invariant under group {number} (mismatch {mismatch:.3g})")
    return inp


def input_to_structure(inp: CrystalInput) -> Structure:
    """The pymatgen ``Structure`` of a :class:`CrystalInput` (inverse of :func:`structure_to_input`)."""
    from pymatgen.core import Element, Lattice, Structure

    return Structure(Lattice(inp.lattice), [Element.from_Z(int(z)) for z in inp.species], inp.frac)


def read_cif(path: str | Path) -> Structure:
    """The first structure of a CIF file; :class:`DataError` naming the file when it cannot be parsed."""
    import warnings

    from pymatgen.io.cif import CifParser

    path = Path(path)
    if not path.is_file():
        raise DataError(f"CIF file {path} does not exist")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            structures = CifParser(path).parse_structures(primitive=False)
    except Exception as err:  # pymatgen raises ValueError/KeyError/IndexError on malformed CIFs
        raise DataError(f"CIF file {path} could not be parsed ({type(err).__name__}: {err})") from None
    if not structures:
        raise DataError(f"CIF file {path} holds no structure")
    _check_cell(path)
    return structures[0]


def _check_cell(path: Path) -> None:
    """The CIF's own ``_cell_length_*`` must be > 0 Å and ``_cell_angle_*`` in (0°, 180°): pymatgen builds a
    lattice from a negative length without complaint (a mirrored cell)."""
    import re

    from pymatgen.io.cif import CifFile

    try:
        blocks = CifFile.from_file(str(path)).data.values()
    except Exception:  # noqa: BLE001 - already parsed once above; nothing more to check
        return
    for block in blocks:
        for key, ok, expected in (
            *((f"_cell_length_{ax}", lambda v: v > 0, "a length > 0 Å") for ax in "abc"),
            *((f"_cell_angle_{ang}", lambda v: 0 < v < 180, "an angle in (0, 180) degrees")
              for ang in ("alpha", "beta", "gamma")),
        ):  # fmt: skip
            raw = block.data.get(key)
            if raw is None or isinstance(raw, list):
                continue
            try:
                value = float(re.sub(r"\(\d+\)$", "", str(raw).strip()))
            except ValueError:
                raise DataError(f"CIF file {path}: {key} is {raw!r}, expected {expected}") from None
            if not ok(value):
                raise DataError(f"CIF file {path}: {key} is {raw}, expected {expected}")


def cif_to_input(path: str | Path, *, symprec: float = DEFAULT_SYMPREC) -> CrystalInput:
    """:func:`read_cif` then :func:`structure_to_input`."""
    return structure_to_input(read_cif(path), symprec=symprec, where=f"CIF file {path}")


def load_materials_project(material_ids: list[str], *, api_key: str | None = None) -> list[Structure]:
    """Opt-in: structures from the Materials Project (needs the ``mp-api`` package, internet and a key).

    Raises :class:`DataError` with what to install or set when any of those is missing or offline.
    """
    key = api_key or os.environ.get("MP_API_KEY")
    if not key:
        raise DataError("Materials Project loading needs an API key: set MP_API_KEY (https://materialsproject.org)")
    try:
        from mp_api.client import MPRester  # type: ignore[import-not-found]
    except ImportError:
        raise DataError("Materials Project loading needs the 'mp-api' package: `uv pip install mp-api`") from None
    try:
        with MPRester(key) as mpr:
            docs = mpr.materials.summary.search(material_ids=material_ids, fields=["material_id", "structure"])
    except Exception as err:  # network and auth errors come in many types
        raise DataError(f"Materials Project query failed (offline or bad key?): {err}") from None
    return [doc.structure for doc in docs]
