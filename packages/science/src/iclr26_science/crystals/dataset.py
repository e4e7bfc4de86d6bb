"""Offline crystal data with trusted labels.

* Generated: symmetric crystals made by pyxtal (PyPI) for chosen space groups from two species of the
  EMT element set (Al, Ni, Cu, Pd, Ag, Pt, Au), each labelled with the group that spglib (through
  ``SpacegroupAnalyzer``, ``symprec`` = :data:`~iclr26_science.crystals.structures.DEFAULT_SYMPREC`)
  actually detects; special positions can raise it (139 → 123, 62 → 65).
* Structure families (:func:`family_crystals`): real prototypes (rocksalt, CsCl, zincblende, fluorite,
  perovskite, Heusler, Laves, A15, NiAs, AlB2, CaCu5, L1_0, L1_2, rutile, CrB, ...) with the EMT metals
  on their sites, positions and cell relaxed with EMT under ``FixSymmetry``
  (:mod:`iclr26_science.crystals.prototypes`); the label is the relaxed EMT energy per atom, i.e. the
  EMT formation energy relative to the elemental fcc crystals.
* Real: the fcc elemental crystals of the same elements shipped in ``ase.collections.dcdft``.
* Target: ASE's effective-medium-theory (EMT) potential energy per atom (eV/atom), computed by ASE on
  the structure. Crystals above ``max_energy`` eV/atom (near-overlapping atoms from the random
  generator) are dropped. At the generated volume this energy is almost only a function of the shortest
  interatomic distance; :func:`relax_volumes` relabels a data set with the EMT energy at the optimal
  volume (cell scaled isotropically, fractional coordinates and cell shape fixed), which depends on the
  whole arrangement of the atoms (coordination, packing, which species neighbour which) instead.

Generated sets are cached on disk (``<cache>/crystals/data/<hash>.npz``) keyed by every parameter.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26_science.crystals.e3nn_baseline import GraphBatch, periodic_radius_graph
from iclr26_science.crystals.model import CrystalBatch
from iclr26_science.crystals.prototypes import CellFilter
from iclr26_science.crystals.structures import CrystalInput, structure_to_input
from iclr26_shared.errors import DataError

__all__ = [
    "EMT_ELEMENTS",
    "CrystalDataset",
    "emt_energy_per_atom",
    "label_diagnostics",
    "min_distances",
    "relax_volume",
    "relax_volumes",
    "family_crystals",
    "generate_crystals",
    "graph_batch",
    "orbit_crystals",
    "padded_batch",
    "real_crystals",
]

#: Elements ASE's EMT potential has parameters for (metals).
EMT_ELEMENTS: tuple[str, ...] = ("Al", "Ni", "Cu", "Pd", "Ag", "Pt", "Au")
DATA_VERSION = 1


@dataclass
class CrystalDataset:
    """Crystals with one scalar target each.

    Attributes:
        crystals: The inputs (standard conventional cells).
        targets: ``float64 [S]`` EMT energy per atom (eV/atom).
        intended: ``int64 [S]`` group the generator was asked for (detected group for real crystals).
        source: ``"pyxtal"``, ``"orbits"``, ``"prototypes"`` or ``"ase-dcdft"``.
        families: ``[S]`` structure-family name of each crystal (``prototypes`` only), else ``None``.
    """

    crystals: list[CrystalInput]
    targets: np.ndarray
    intended: np.ndarray
    source: str = "pyxtal"
    families: np.ndarray | None = None
    _graphs: dict[float, list[tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.crystals)

    @property
    def groups(self) -> np.ndarray:
        """``int64 [S]`` detected space groups."""
        return np.array([c.space_group for c in self.crystals], dtype=np.int64)

    def subset(self, index: Sequence[int] | np.ndarray) -> CrystalDataset:
        """The crystals at ``index`` (graphs are recomputed lazily)."""
        idx = [int(i) for i in index]
        fam = None if self.families is None else self.families[idx]
        return CrystalDataset([self.crystals[i] for i in idx], self.targets[idx], self.intended[idx], self.source, fam)

    def graphs(self, cutoff: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """Periodic radius graphs ``(edge_index, edge_vec)`` of every crystal (cached per cutoff)."""
        if cutoff not in self._graphs:
            self._graphs[cutoff] = [periodic_radius_graph(c.frac, c.lattice, cutoff) for c in self.crystals]
        return self._graphs[cutoff]

    def save(self, path: Path) -> None:
        """Write as one ``.npz`` (atomic)."""
        from iclr26_shared.io import atomic_write_bytes

        counts = np.array([c.num_atoms for c in self.crystals], dtype=np.int64)
        buf = io.BytesIO()
        extra = {} if self.families is None else {"family": np.asarray(self.families, dtype=str)}
        savez: Any = np.savez  # (numpy's stub types the keyword arrays as its ``allow_pickle`` flag)
        savez(
            buf,
            **extra,
            version=np.int64(DATA_VERSION),
            counts=counts,
            species=np.concatenate([c.species for c in self.crystals]),
            frac=np.concatenate([c.frac for c in self.crystals]),
            lattice=np.stack([c.lattice for c in self.crystals]),
            group=self.groups,
            targets=self.targets,
            intended=self.intended,
        )
        atomic_write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path: Path, source: str = "pyxtal") -> CrystalDataset:
        """Read :meth:`save`'s file; :class:`DataError` naming the file when it is malformed."""
        try:
            with np.load(path, allow_pickle=False) as d:
                data = {k: d[k] for k in d.files}
        except (OSError, ValueError) as err:
            raise DataError(f"{path}: cannot read crystal data set ({err})") from None
        need = {"version", "counts", "species", "frac", "lattice", "group", "targets", "intended"}
        if not need <= set(data) or int(data["version"]) != DATA_VERSION:
            raise DataError(f"{path}: not a crystal data set of version {DATA_VERSION}")
        counts = data["counts"]
        s = len(counts)
        if data["species"].shape != (counts.sum(),) or data["frac"].shape != (counts.sum(), 3):
            raise DataError(f"{path}: atom arrays do not match the per-crystal counts")
        if data["lattice"].shape != (s, 3, 3) or data["targets"].shape != (s,) or data["group"].shape != (s,):
            raise DataError(f"{path}: per-crystal arrays must have length {s}")
        if not np.isfinite(data["targets"]).all():
            raise DataError(f"{path}: targets contain NaN or inf")
        bounds = np.concatenate([[0], np.cumsum(counts)])
        crystals = [
            CrystalInput(
                data["species"][a:b].astype(np.int64),
                data["frac"][a:b].astype(np.float64),
                data["lattice"][i].astype(np.float64),
                int(data["group"][i]),
            )
            for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))
        ]
        families = data.get("family")
        if families is not None and families.shape != (s,):
            raise DataError(f"{path}: family names must have length {s}")
        return cls(crystals, data["targets"].astype(np.float64), data["intended"].astype(np.int64), source, families)


def emt_energy_per_atom(crystal: CrystalInput) -> float:
    """ASE EMT potential energy per atom (eV/atom) of ``crystal``."""
    from ase import Atoms
    from ase.calculators.emt import EMT

    atoms = Atoms(numbers=crystal.species, scaled_positions=crystal.frac, cell=crystal.lattice, pbc=True)
    atoms.calc = EMT()
    try:
        return float(atoms.get_potential_energy()) / len(atoms)
    except NotImplementedError as err:
        raise DataError(f"EMT has no parameters for this crystal's elements ({err})") from None


#: Isotropic scale factors of the coarse grid that brackets the EMT volume minimum.
_SCALE_GRID = np.linspace(0.75, 1.55, 9)


def relax_volume(crystal: CrystalInput, *, xatol: float = 1e-3) -> tuple[CrystalInput, float]:
    """The crystal with its lattice scaled isotropically to the EMT energy minimum, and that energy (eV/atom).

    Fractional coordinates, cell shape and hence the space group are kept. The minimum is bracketed on
    a grid of scales 0.75-1.55 and refined by bounded Brent (``scipy.optimize.minimize_scalar``) to
    ``xatol`` in the scale."""
    from ase import Atoms
    from ase.calculators.emt import EMT
    from scipy.optimize import minimize_scalar

    atoms = Atoms(numbers=crystal.species, scaled_positions=crystal.frac, cell=crystal.lattice, pbc=True)
    atoms.calc = EMT()

    def energy(scale: float) -> float:
        atoms.set_cell(crystal.lattice * scale, scale_atoms=True)
        return float(atoms.get_potential_energy()) / len(atoms)

    grid = [energy(float(s)) for s in _SCALE_GRID]
    i = int(np.argmin(grid))
    lo, hi = _SCALE_GRID[max(i - 1, 0)], _SCALE_GRID[min(i + 1, len(_SCALE_GRID) - 1)]
    res = minimize_scalar(energy, bounds=(float(lo), float(hi)), method="bounded", options={"xatol": xatol})
    scale, best = (float(res.x), float(res.fun)) if res.fun <= grid[i] else (float(_SCALE_GRID[i]), grid[i])
    relaxed = CrystalInput(crystal.species, crystal.frac, crystal.lattice * scale, crystal.space_group)
    return relaxed, best


def relax_volumes(data: CrystalDataset, *, cache: bool = True) -> CrystalDataset:
    """``data`` with every crystal volume-relaxed (:func:`relax_volume`) and relabelled with its relaxed
    EMT energy per atom; cached on disk, keyed by the crystals' arrays."""
    import hashlib

    from iclr26_shared.data import cache_dir

    h = hashlib.sha256(f"relax-v{DATA_VERSION}".encode())
    for c in data.crystals:
        for arr in (c.species, c.frac, c.lattice):
            h.update(np.ascontiguousarray(arr).tobytes())
    path = cache_dir() / "crystals" / "data" / f"relaxed-{h.hexdigest()[:16]}.npz"
    if cache and path.is_file():
        try:
            return CrystalDataset.load(path, data.source)
        except DataError:
            pass  # recompute a corrupt cache entry
    pairs = [relax_volume(c) for c in data.crystals]
    out = CrystalDataset(
        [p[0] for p in pairs], np.array([p[1] for p in pairs]), data.intended.copy(), data.source, data.families
    )
    if cache:
        try:
            out.save(path)
        except OSError:
            pass
    return out


def min_distances(data: CrystalDataset) -> np.ndarray:
    """``[S]`` shortest interatomic distance (Å, periodic images included) of every crystal."""
    out = np.empty(len(data))
    for k, c in enumerate(data.crystals):
        diff = c.frac[:, None] - c.frac[None]  # [N, N, 3]
        shifts = np.stack(np.meshgrid(*[np.arange(-1, 2)] * 3, indexing="ij"), -1).reshape(-1, 3)
        vec = (diff - np.rint(diff))[:, :, None] + shifts[None, None]  # [N, N, 27, 3]
        dist = np.linalg.norm(vec @ c.lattice, axis=-1)
        dist[dist < 1e-8] = np.inf  # an atom and itself
        out[k] = dist.min()
    return out


def label_diagnostics(data: CrystalDataset) -> dict[str, float]:
    """How much of the target simple descriptors explain (in-sample least-squares fits, MAE in the
    target's unit):

    * ``r_min_distance``: Pearson r of the target with the shortest interatomic distance ``d_min``;
    * ``linear_fit_min_distance_mae``: MAE of ``a + b d_min`` (the reviewer's "minimum distance" label);
    * ``composition_fit_mae``: MAE of a linear fit on the element fractions (composition only, no
      structure);
    * ``composition_min_distance_fit_mae``: both together;
    * ``mean_predictor_mae``: MAE of the mean (no skill);
    * ``min_distance_explained``: ``1 − linear_fit_min_distance_mae / mean_predictor_mae``.
    """
    d = min_distances(data)
    y = data.targets
    r = float(np.corrcoef(d, y)[0, 1]) if len(y) > 2 and d.std() > 0 and y.std() > 0 else float("nan")
    zs = sorted({int(z) for c in data.crystals for z in c.species})
    frac = np.array([[float(np.mean(c.species == z)) for z in zs] for c in data.crystals])  # [S, E]

    def fit_mae(x: np.ndarray) -> float:
        design = np.concatenate([np.ones((len(y), 1)), x], 1)
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        return float(np.abs(design @ coef - y).mean())

    mean_mae = float(np.abs(y - y.mean()).mean())
    dist_mae = fit_mae(d[:, None]) if len(y) > 2 else mean_mae
    return {
        "r_min_distance": r,
        "linear_fit_min_distance_mae": dist_mae,
        "composition_fit_mae": fit_mae(frac[:, 1:]) if len(y) > 2 else mean_mae,
        "composition_min_distance_fit_mae": fit_mae(np.concatenate([frac[:, 1:], d[:, None]], 1))
        if len(y) > 2
        else mean_mae,
        "mean_predictor_mae": mean_mae,
        "min_distance_explained": 1.0 - dist_mae / mean_mae if mean_mae > 0 else float("nan"),
    }


def _cache_path(params: dict[str, object]) -> Path:
    from iclr26_shared.config import stable_hash
    from iclr26_shared.data import cache_dir

    return cache_dir() / "crystals" / "data" / f"pyxtal-{stable_hash(params)}.npz"


@contextlib.contextmanager
def _shared_tolerance_matrix() -> Iterator[None]:
    """pyxtal's ``Wyckoff_position.merge`` calls ``check_images`` without a tolerance matrix, which then
    builds the default ``Tol_matrix(prototype="atomic")`` anew on every call (most of the generation
    time). Pass that same default matrix, built once, for the duration of the block."""
    import pyxtal.symmetry as pyxtal_symmetry
    from pyxtal.tolerance import Tol_matrix

    original = pyxtal_symmetry.check_images
    matrix = Tol_matrix(prototype="atomic")

    def check_images(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("tm") is None and len(args) < 5:
            kwargs["tm"] = matrix
        return original(*args, **kwargs)

    pyxtal_symmetry.check_images = check_images
    try:
        yield
    finally:
        pyxtal_symmetry.check_images = original


def generate_crystals(
    groups: Sequence[int],
    per_group: int,
    *,
    seed: int = 0,
    elements: Sequence[str] = EMT_ELEMENTS,
    max_atoms: int = 48,
    volume_factor: float = 1.3,
    max_energy: float = 3.0,
    max_tries: int = 6,
    cache: bool = True,
) -> CrystalDataset:
    """Random symmetric binary crystals, ``per_group`` per requested group (fewer if infeasible).

    Each crystal: two distinct species from ``elements``; per species a count drawn from the group's
    three smallest Wyckoff multiplicities; ``pyxtal.from_random(3, group, species, counts,
    factor=volume_factor)``; standardised and labelled with the detected group; EMT energy per atom.
    """
    params: dict[str, object] = dict(
        groups=[int(g) for g in groups], per_group=per_group, seed=seed, elements=list(elements),
        max_atoms=max_atoms, volume_factor=volume_factor, max_energy=max_energy, max_tries=max_tries,
        version=DATA_VERSION,
    )  # fmt: skip
    bad = [e for e in elements if e not in EMT_ELEMENTS]
    if bad:
        raise DataError(f"elements {bad} have no EMT parameters (choose from {', '.join(EMT_ELEMENTS)})")
    path = _cache_path(params)
    if cache and path.is_file():
        try:
            return CrystalDataset.load(path)
        except DataError:
            pass  # regenerate a corrupt cache entry
    from pyxtal import pyxtal
    from pyxtal.symmetry import Group

    with _shared_tolerance_matrix():
        data = _generate(
            pyxtal, Group, groups, per_group, seed, elements, max_atoms, volume_factor, max_energy, max_tries
        )
    if cache:
        try:
            data.save(path)
        except OSError:
            pass
    return data


def family_crystals(
    families: Sequence[str],
    per_family: int,
    *,
    seed: int = 0,
    elements: Sequence[str] = EMT_ELEMENTS,
    relax: bool = True,
    fmax: float = 0.01,
    max_atoms: int = 48,
    max_energy: float = 3.0,
    cell_filter: CellFilter = "unit",
    cache: bool = True,
) -> CrystalDataset:
    """Real structure families of the EMT metals (:func:`~iclr26_science.crystals.prototypes.prototype_crystals`:
    rocksalt, CsCl, zincblende, fluorite, perovskite, Heusler, Laves, A15, NiAs, AlB2, CaCu5, L1_0, ...),
    relaxed under their symmetry with EMT (``relax``, with the ``cell_filter`` of
    :func:`~iclr26_science.crystals.prototypes.relax_under_symmetry`) and labelled with the detected group and the EMT
    energy per atom of the standardised cell; ``families`` records each crystal's family. Cached on disk
    (``<cache>/crystals/data/prototypes-<hash>.npz``) keyed by every parameter."""
    from iclr26_science.crystals.prototypes import PROTOTYPES, prototype_crystals

    params: dict[str, object] = dict(
        families=list(families), per_family=per_family, seed=seed, elements=list(elements), relax=relax,
        fmax=fmax, max_atoms=max_atoms, max_energy=max_energy, version=DATA_VERSION, generator="prototypes-v1",
    )  # fmt: skip
    if cell_filter != "frechet":  # the data before the choice existed keep their cache key
        params["cell_filter"] = cell_filter
    bad = [e for e in elements if e not in EMT_ELEMENTS]
    if bad:
        raise DataError(f"elements {bad} have no EMT parameters (choose from {', '.join(EMT_ELEMENTS)})")
    from iclr26_shared.config import stable_hash
    from iclr26_shared.data import cache_dir

    path = cache_dir() / "crystals" / "data" / f"prototypes-{stable_hash(params)}.npz"
    if cache and path.is_file():
        try:
            data = CrystalDataset.load(path, "prototypes")
            if data.families is not None:
                return data
        except DataError:
            pass  # regenerate a corrupt cache entry
    crystals, energies, names = prototype_crystals(
        families, per_family, seed=seed, elements=elements, relax=relax, fmax=fmax, max_energy=max_energy,
        max_atoms=max_atoms, cell_filter=cell_filter,
    )  # fmt: skip
    intended = np.array([PROTOTYPES[n].group for n in names], dtype=np.int64)
    data = CrystalDataset(crystals, energies, intended, "prototypes", np.array(names, dtype=str))
    if cache:
        try:
            data.save(path)
        except OSError:
            pass
    return data


def _generate(
    pyxtal: Any, Group: Any, groups: Sequence[int], per_group: int, seed: int, elements: Sequence[str],
    max_atoms: int, volume_factor: float, max_energy: float, max_tries: int,
) -> CrystalDataset:  # fmt: skip
    rng = np.random.default_rng(seed)
    crystals: list[CrystalInput] = []
    targets: list[float] = []
    intended: list[int] = []
    for group in groups:
        mults = sorted({int(w.multiplicity) for w in Group(int(group)).Wyckoff_positions})[:3]
        made = 0
        for _ in range(per_group * max_tries):
            if made >= per_group:
                break
            species = [str(s) for s in rng.choice(list(elements), 2, replace=False)]
            counts = [int(rng.choice(mults)) for _ in species]
            if sum(counts) > max_atoms:
                continue
            xtal = pyxtal()
            try:
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    xtal.from_random(3, int(group), species, counts, factor=volume_factor,
                                     random_state=int(rng.integers(1 << 31)))  # fmt: skip
                if not xtal.valid:
                    continue
                structure = xtal.to_pymatgen()
                crystal = structure_to_input(structure, where=f"pyxtal crystal (group {group})")
            except Exception:  # noqa: BLE001 - infeasible (group, composition) pairs are skipped by design
                continue
            if crystal.num_atoms > max_atoms:
                continue
            energy = emt_energy_per_atom(crystal)
            if not np.isfinite(energy) or energy > max_energy:
                continue
            crystals.append(crystal)
            targets.append(energy)
            intended.append(int(group))
            made += 1
    if not crystals:
        raise DataError(f"pyxtal produced no valid crystal for groups {list(groups)}")
    return CrystalDataset(crystals, np.array(targets), np.array(intended, dtype=np.int64))


def real_crystals(elements: Sequence[str] = EMT_ELEMENTS) -> CrystalDataset:
    """The elemental crystals of ``elements`` shipped in ``ase.collections.dcdft``, EMT-labelled."""
    from ase.collections import dcdft
    from pymatgen.io.ase import AseAtomsAdaptor

    crystals, targets = [], []
    for name in elements:
        if name not in dcdft.names:
            raise DataError(f"ase.collections.dcdft has no crystal {name!r}")
        structure = AseAtomsAdaptor.get_structure(dcdft[name])
        crystal = structure_to_input(structure, where=f"ase.collections.dcdft[{name!r}]")
        crystals.append(crystal)
        targets.append(emt_energy_per_atom(crystal))
    groups = np.array([c.space_group for c in crystals], dtype=np.int64)
    return CrystalDataset(crystals, np.array(targets), groups, "ase-dcdft")


def padded_batch(
    data: CrystalDataset, index: Sequence[int] | np.ndarray, features: torch.Tensor | None = None, *,
    dtype: torch.dtype = torch.float32, max_atoms: int | None = None,
) -> CrystalBatch:  # fmt: skip
    """A :class:`CrystalBatch` of the crystals at ``index``, padded to their largest size (or ``max_atoms``);
    ``features`` (``[S, N_max, 2K]`` for the whole data set) are sliced alongside."""
    idx = [int(i) for i in index]
    n = max_atoms or max(data.crystals[i].num_atoms for i in idx)
    species = torch.zeros(len(idx), n, dtype=torch.long)
    frac = torch.zeros(len(idx), n, 3, dtype=dtype)
    for row, i in enumerate(idx):
        c = data.crystals[i]
        species[row, : c.num_atoms] = torch.from_numpy(c.species)
        frac[row, : c.num_atoms] = torch.from_numpy(c.frac).to(dtype)
    lattice = torch.from_numpy(np.stack([data.crystals[i].lattice for i in idx])).to(dtype)
    group = torch.tensor([data.crystals[i].space_group for i in idx], dtype=torch.long)
    feats = None if features is None else features[idx][:, :n]
    return CrystalBatch(species, frac, lattice, group, feats)


def graph_batch(
    data: CrystalDataset, index: Sequence[int] | np.ndarray, cutoff: float, *, dtype: torch.dtype = torch.float32
) -> GraphBatch:
    """A :class:`GraphBatch` (periodic radius graphs at ``cutoff`` Å) of the crystals at ``index``."""
    graphs = data.graphs(cutoff)
    species, edges, vecs, crystal = [], [], [], []
    offset = 0
    for row, i in enumerate(int(j) for j in index):
        c = data.crystals[i]
        ei, ev = graphs[i]
        species.append(torch.from_numpy(c.species))
        edges.append(torch.from_numpy(ei) + offset)
        vecs.append(torch.from_numpy(ev))
        crystal.append(torch.full((c.num_atoms,), row, dtype=torch.long))
        offset += c.num_atoms
    return GraphBatch(
        torch.cat(species), torch.cat(edges, 1), torch.cat(vecs).to(dtype), torch.cat(crystal), len(crystal)
    )


def orbit_crystals(
    groups: Sequence[int],
    per_group: int,
    *,
    seed: int = 0,
    elements: Sequence[str] = EMT_ELEMENTS,
    max_atoms: int = 24,
    volume_per_atom: float = 15.0,
    min_distance: float = 2.0,
    max_energy: float = 3.0,
    max_tries: int = 80,
    snap_probability: float = 0.7,
) -> CrystalDataset:
    """A small, dependency-light generator (pymatgen only): for each crystal, 1–2 random Wyckoff orbits
    per species (a random point, each coordinate snapped to 0, 1/4 or 1/2 with ``snap_probability``, and its
    images under every operation, merged when they coincide), a random lattice of the crystal system
    scaled to ``volume_per_atom``, rejected below ``min_distance`` Å; standardised, labelled with the
    detected group and its EMT energy per atom. Used by the ``smoke`` preset (pyxtal's import alone
    takes ~10 s); the default generator is pyxtal (:func:`generate_crystals`)."""
    from pymatgen.core import Element

    from iclr26_science.crystals.groups import space_group_ops
    from iclr26_science.crystals.lattices import random_lattice

    z_of = {e: Element(e).Z for e in elements}
    rng = np.random.default_rng(seed)
    crystals: list[CrystalInput] = []
    targets: list[float] = []
    intended: list[int] = []
    for group in groups:
        ops = space_group_ops(int(group))
        made = 0
        for _ in range(per_group * max_tries):
            if made >= per_group:
                break
            species_list = [str(s) for s in rng.choice(list(elements), 2, replace=False)]
            zs, fracs = [], []
            for sym in species_list:
                for _ in range(int(rng.integers(1, 3))):
                    x = rng.random(3)
                    snap = rng.random(3) < snap_probability
                    x[snap] = rng.choice([0.0, 0.25, 0.5], size=int(snap.sum()))
                    pts = np.mod(ops.apply(x[None])[:, 0], 1.0)
                    keys = np.mod(np.rint(pts * 1e6).astype(np.int64), 1_000_000)
                    uniq = pts[np.unique(keys, axis=0, return_index=True)[1]]
                    fracs.extend(uniq)
                    zs.extend([z_of[sym]] * len(uniq))
            if len(zs) > max_atoms:
                continue
            frac = np.array(fracs)
            lattice = random_lattice(int(group), rng, (3.0, 8.0))
            lattice *= (volume_per_atom * len(zs) / abs(np.linalg.det(lattice))) ** (1 / 3)
            diff = frac[:, None] - frac[None]
            diff -= np.rint(diff)
            dist = np.linalg.norm(diff @ lattice, axis=-1) + np.eye(len(zs)) * 1e9
            if dist.min() < min_distance:
                continue
            from pymatgen.core import Lattice, Structure

            try:
                crystal = structure_to_input(Structure(Lattice(lattice), zs, frac), where=f"orbit crystal ({group})")
            except DataError:
                continue
            energy = emt_energy_per_atom(crystal)
            if not np.isfinite(energy) or energy > max_energy:
                continue
            crystals.append(crystal)
            targets.append(energy)
            intended.append(int(group))
            made += 1
    if not crystals:
        raise DataError(f"the orbit generator produced no valid crystal for groups {list(groups)}")
    return CrystalDataset(crystals, np.array(targets), np.array(intended, dtype=np.int64))
