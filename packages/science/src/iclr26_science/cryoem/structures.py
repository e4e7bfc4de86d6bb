"""Atomic models for density simulation: real structures from ``MDAnalysisTests``' data folder.

``load_structure(name_or_path)`` returns an :class:`Atoms` (positions in Å, atomic numbers), read with
MDAnalysis from a built-in name (:data:`STRUCTURES`) or any PDB/mmCIF/GRO file the user gives;
``adk_frames(k)`` samples the adenylate-kinase closed → open MD transition (3,341 atoms × 98 frames,
``adk.psf`` + ``adk_dims.dcd``). Elements come from the file when it has them, otherwise from the atom
masses (the PSF has none). MDAnalysisTests is published only as an sdist, so its files come from the pinned
sdist, fetched once by sha256 into the data cache (:mod:`iclr26_shared.wheeldata`; offline afterwards).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr26_shared.data import register_dataset
from iclr26_shared.errors import DataError

__all__ = ["ATOMIC_NUMBERS", "STRUCTURES", "Atoms", "adk_frames", "load_structure", "structure_path"]

#: Atomic numbers (molmap weights) of the elements found in biomolecular models.
ATOMIC_NUMBERS: dict[str, int] = {
    "H": 1, "C": 6, "N": 7, "O": 8, "NA": 11, "MG": 12, "P": 15, "S": 16, "CL": 17, "K": 19, "CA": 20,
    "MN": 25, "FE": 26, "CO": 27, "NI": 28, "CU": 29, "ZN": 30, "SE": 34,
}  # fmt: skip
_MASSES = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "NA": 22.99, "MG": 24.305, "P": 30.974,
           "S": 32.06, "CL": 35.45, "K": 39.098, "CA": 40.078, "MN": 54.938, "FE": 55.845, "CO": 58.933,
           "NI": 58.693, "CU": 63.546, "ZN": 65.38, "SE": 78.971}  # fmt: skip

#: Built-in structures: name → (file in MDAnalysisTests' data folder, description). The files are
#: ``MDAnalysisTests.datafiles``' PDB_closed, PDB_small, CONECT, PDB_full, PDB_sub_sol, PDB_HOLE, PDB_CRYOEM_BOX
#: and PDB_multiframe, read from the pinned sdist (:data:`iclr26_science.wheels.MDANALYSIS_TESTS`).
STRUCTURES: dict[str, tuple[str, str]] = {
    "adk-closed": ("adk_closed.pdb", "adenylate kinase, closed (1AKE-like), 214 residues"),
    "adk-open": ("adk_open.pdb", "adenylate kinase, open (4AKE-like), 214 residues"),
    "1hvr": ("1hvr.pdb", "HIV-1 protease dimer with inhibitor, 1HVR, 198 residues"),
    "4e43": ("4E43.pdb", "4E43, 204 residues"),
    "cobrotoxin": ("cobrotoxin.pdb", "cobrotoxin (solvent removed), 62 residues"),
    "gramicidin": ("1grm_single.pdb", "gramicidin A channel, 1GRM, 30 residues"),
    "5a7u": ("5a7u.pdb", "5A7U fragment from a cryo-EM box, 27 residues"),
    "neopetrosiamide": ("nmr_neopetrosiamide.pdb", "neopetrosiamide NMR model, 27 residues"),
}


def _data_file(name: str) -> Path:
    """A file of MDAnalysisTests' data folder, from the pinned sdist (fetched once into the data cache)."""
    from iclr26_science.wheels import MDANALYSIS_TESTS
    from iclr26_shared.wheeldata import wheel_path

    return wheel_path(
        MDANALYSIS_TESTS, "mdanalysistests-2.11.0", "MDAnalysisTests", "data", name, purpose="cryo-EM structures"
    )


@dataclass(frozen=True)
class Atoms:
    """An atomic model: ``positions`` ``[N, 3]`` Å (x, y, z) and ``numbers`` ``[N]`` atomic numbers."""

    name: str
    positions: np.ndarray
    numbers: np.ndarray

    def __post_init__(self) -> None:
        if self.positions.ndim != 2 or self.positions.shape[1] != 3 or len(self.positions) == 0:
            raise DataError(f"{self.name}: expected [N, 3] atom positions, got {self.positions.shape}")
        if self.numbers.shape != (len(self.positions),):
            raise DataError(f"{self.name}: {len(self.numbers)} atomic numbers for {len(self.positions)} atoms")
        if not np.isfinite(self.positions).all():
            raise DataError(f"{self.name}: NaN/inf atom positions")

    def centered(self) -> Atoms:
        """The same atoms with their bounding-box centre at the origin."""
        c = (self.positions.max(0) + self.positions.min(0)) / 2
        return Atoms(self.name, self.positions - c, self.numbers)


def structure_path(name: str) -> Path:
    """The file of a built-in structure (MDAnalysisTests' data, from the pinned sdist)."""
    if name not in STRUCTURES:
        raise DataError(f"unknown structure {name!r}: expected a file path or one of {', '.join(STRUCTURES)}")
    return _data_file(STRUCTURES[name][0])


def _elements(atoms: object) -> np.ndarray:
    try:
        el = np.asarray(atoms.elements)  # type: ignore[attr-defined]
        el = np.char.upper(el.astype(str))
        if all(e in ATOMIC_NUMBERS for e in el):
            return el
    except (AttributeError, ValueError, TypeError):  # MDAnalysis: NoDataError (an AttributeError/ValueError)
        pass
    masses = np.asarray(atoms.masses, dtype=float)  # type: ignore[attr-defined]
    names, table = list(_MASSES), np.array(list(_MASSES.values()))
    idx = np.abs(masses[:, None] - table[None]).argmin(1)
    return np.array([names[i] for i in idx])


def _universe(*files: str | Path) -> object:
    import MDAnalysis as mda

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return mda.Universe(*[str(f) for f in files])
        except (OSError, ValueError, TypeError, IndexError, KeyError, EOFError, AttributeError) as err:
            # EOFError: an empty PDB (MDAnalysis reads past the end); AttributeError: a file with no atom records
            msg = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise DataError(f"{files[0]}: cannot read the atomic model ({msg}; expected atom records)") from None


def _select(u: object, name: str, selection: str, hydrogens: bool) -> object:
    sel = selection if hydrogens else f"({selection}) and not (name H* or type H)"
    group = u.select_atoms(sel)  # type: ignore[attr-defined]
    if len(group) == 0:
        raise DataError(f"{name}: no atoms match the selection {sel!r}")
    return group


def load_structure(name_or_path: str | Path, *, selection: str = "protein", hydrogens: bool = False) -> Atoms:
    """A built-in structure (:data:`STRUCTURES`) or a PDB/mmCIF/GRO file, restricted to ``selection``
    (MDAnalysis syntax; default: protein atoms), without hydrogens unless ``hydrogens``."""
    key = str(name_or_path)
    path = structure_path(key) if key in STRUCTURES else Path(key)
    if not path.is_file():
        raise DataError(f"{path}: no such structure file (or built-in name: {', '.join(STRUCTURES)})")
    group = _select(_universe(path), key, selection, hydrogens)
    el = _elements(group)
    unknown = sorted({e for e in el if e not in ATOMIC_NUMBERS})
    if unknown:
        raise DataError(f"{path}: unknown elements {unknown}")
    return Atoms(key, np.asarray(group.positions, dtype=np.float64), np.array([ATOMIC_NUMBERS[e] for e in el]))  # type: ignore[attr-defined]


def adk_frames(count: int, *, hydrogens: bool = False, selection: str = "protein") -> list[Atoms]:
    """``count`` frames evenly spaced over the adenylate-kinase closed → open trajectory (98 frames)."""
    u = _universe(_data_file("adk.psf"), _data_file("adk_dims.dcd"))
    n = len(u.trajectory)  # type: ignore[attr-defined]
    if not 1 <= count <= n:
        raise DataError(f"adk trajectory: asked for {count} frames, it has {n}")
    group = _select(u, "adk", selection, hydrogens)
    numbers = np.array([ATOMIC_NUMBERS[e] for e in _elements(group)])
    out = []
    for i in np.linspace(0, n - 1, count).round().astype(int):
        u.trajectory[int(i)]  # type: ignore[attr-defined]
        out.append(Atoms(f"adk-frame{int(i)}", np.asarray(group.positions, dtype=np.float64).copy(), numbers))  # type: ignore[attr-defined]
    return out


register_dataset(
    "adk-trajectory",
    adk_frames,
    description="adenylate kinase closed → open MD transition, 3,341 atoms × 98 frames (MDAnalysisTests adk.psf + "
    "adk_dims.dcd); loader(count) gives evenly spaced frames",
    offline=True,
    kind="atomic-models",
)
register_dataset(
    "mdanalysis-structures",
    load_structure,
    description="protein structures shipped in MDAnalysisTests (adk open/closed, 1HVR, 4E43, cobrotoxin, gramicidin, "
    "5A7U, neopetrosiamide) or a PDB/mmCIF path; loader(name_or_path)",
    offline=True,
    kind="atomic-models",
)
