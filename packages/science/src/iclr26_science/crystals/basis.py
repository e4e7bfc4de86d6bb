r"""The symmetry-adapted Fourier basis of one space group (paper Prop. 3.1, Thm. 3.2, Alg. 1).

A function on the unit-cell torus is ``f(x) = Σ_{ω∈ℤ³} F(ω) e^{i2π ωᵀx}``. It is invariant under
``g(x) = R x + t`` iff its coefficients satisfy the constraint

    F(Rᵀω) = e^{i2π ωᵀt} F(ω)            for every operation (R, t) of the group G.

Construction (:func:`build_orbits`): the nodes are the reciprocal-lattice frequencies ``ω`` inside a
ball ``ωᵀMω ≤ r²`` (``M`` the reference metric, preserved by every ``R``, so the ball is a union of
orbits); each operation adds the edge ``ω → Rᵀω`` with weight ``e^{i2π ωᵀt}``. Connected components
are the orbits ``O``. Starting from the representative ``ξ`` (the smallest frequency of ``O``,
``F(ξ) = 1``) the weights fix ``F`` on ``O``; if any edge disagrees (in particular a self-loop
``Rᵀω = ω`` with ``e^{i2π ωᵀt} ≠ 1``), the constraint forces ``F = 0`` on the whole orbit: its
frequencies are *frustrated* and dropped (these are the crystallographic systematic absences). Each
remaining orbit gives one invariant basis function

    e_O(x) = Σ_{ω∈O} F(ω) e^{i2π ωᵀx}                  (normalization="unit", the default)
    e_O(x) = |O|^{-1/2} Σ_{ω∈O} F(ω) e^{i2π ωᵀx}       (normalization="orthonormal")

``"unit"`` is the reference code's normalisation (PrincetonLIPS/crystal-fourier-transformer,
``utils/space_graphs.py`` + ``pretrain/mlp.py:encode_positions``): its encoding ``E(x)·M_G`` has one
column per frequency ``ω_j`` of a fixed ball, equal to ``Σ_{ω∈O(ω_j)} F_j(ω) e^{i2π ωᵀx}`` with
unit-modulus coefficients relative to ``ω_j`` (``F_j(ω_j) = 1``); frustrated columns are zero. Column
``j`` is therefore ``e_O`` above times a unit phase, repeated ``|O|`` times per orbit (once per member).
We keep one column per orbit (its representative's, ``F(ξ) = 1``) and include the constant orbit
``{0}`` that the reference drops (``tests/crystals/test_reference_parity.py`` pins this against the
reference code's shipped ``M_G`` matrices). ``"orthonormal"`` gives each ``e_O`` unit L² norm on the
torus (the basis before issue 55).

The Reynolds twin (:func:`reynolds_basis`) is the plain group average of a plane wave,
``(Pφ_ξ)(x) = |G|⁻¹ Σ_g e^{i2π ξᵀ(R_g x + t_g)}``, which equals ``e_O(x)/√|O|`` for the representative
``ξ`` and vanishes exactly for frustrated ``ξ`` (with ``"orthonormal"``; ``e_O/|O|`` with ``"unit"``).
"""

from __future__ import annotations

import functools
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, overload

import numpy as np
import torch

from iclr26_science.crystals.groups import check_group_number, reference_metric, space_group_ops
from iclr26_shared.errors import ConfigError

__all__ = [
    "BASIS_CACHE_VERSION",
    "BasisNormalization",
    "OrbitTable",
    "SymmetryAdaptedBasis",
    "basis_cache_dir",
    "build_orbits",
    "frequency_ball",
    "plane_wave_frequencies",
    "reynolds_basis",
]

#: Bumped whenever the construction changes, so stale disk caches are rebuilt.
BASIS_CACHE_VERSION = 1
_TWO_PI = 2.0 * math.pi
#: ``"unit"``: unit-modulus coefficients ``F(ω)`` (the reference code's); ``"orthonormal"``: ``F(ω)/√|O|``.
BasisNormalization = Literal["unit", "orthonormal"]
_NORMALIZATIONS = ("unit", "orthonormal")
_PHASE_TOL = 1e-8


def basis_cache_dir() -> Path:
    """``$ICLR26_DATA/crystals/basis-v<version>`` or ``~/.cache/iclr26/crystals/basis-v<version>``."""
    from iclr26_shared.data import cache_dir

    return cache_dir() / "crystals" / f"basis-v{BASIS_CACHE_VERSION}"


def frequency_ball(metric: np.ndarray, radius: float) -> np.ndarray:
    """All ``ω ∈ ℤ³`` with ``ωᵀ M ω ≤ radius²``, sorted by ``(ωᵀMω, h, k, l)``: ``int64 [F, 3]``."""
    metric = np.asarray(metric, dtype=np.float64)
    bound = np.ceil(radius * np.sqrt(np.diag(np.linalg.inv(metric))) + 1e-9).astype(int)
    axes = [np.arange(-b, b + 1) for b in bound]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    norm2 = np.einsum("fi,ij,fj->f", grid, metric, grid)
    keep = norm2 <= radius**2 + 1e-9
    grid, norm2 = grid[keep], np.round(norm2[keep], 9)
    order = np.lexsort((grid[:, 2], grid[:, 1], grid[:, 0], norm2))
    return grid[order].astype(np.int64)


def plane_wave_frequencies(num: int) -> np.ndarray:
    """The ``num`` smallest frequencies of the plain (non-symmetry-adapted) Fourier encoding: ``[num, 3]``."""
    radius = 1.0
    while True:
        freqs = frequency_ball(np.eye(3), radius)
        if len(freqs) >= num:
            return freqs[:num]
        radius *= 1.3


@dataclass(frozen=True)
class OrbitTable:
    """All orbits of a frequency ball under one group.

    Attributes:
        frequencies: ``int64 [F, 3]`` every frequency of the ball, sorted by norm.
        orbit: ``int64 [F]`` component (orbit) id of each frequency; ids ordered by representative.
        weight: ``complex128 [F]`` the coefficient ``F(ω)`` relative to the representative (1 there).
        frustrated: ``bool [num_orbits]`` orbits on which the constraint forces ``F = 0``.
        representative: ``int64 [num_orbits]`` index (into ``frequencies``) of each orbit's representative.
    """

    frequencies: np.ndarray
    orbit: np.ndarray
    weight: np.ndarray
    frustrated: np.ndarray
    representative: np.ndarray


def build_orbits(space_group: int, radius: float) -> OrbitTable:
    """Constraint graph of ``space_group`` over the frequency ball of ``radius`` → orbits with phases."""
    ops = space_group_ops(space_group)
    freqs = frequency_ball(reference_metric(space_group), radius)
    n = len(freqs)
    span = int(np.abs(freqs).max()) if n else 0
    base = 2 * span + 1

    def key(w: np.ndarray) -> np.ndarray:
        return ((w[..., 0] + span) * base + (w[..., 1] + span)) * base + (w[..., 2] + span)

    keys = key(freqs)
    sorter = np.argsort(keys)
    images = np.einsum("fi,gij->gfj", freqs, ops.rotations)  # (Rᵀω)ᵀ = ωᵀR : [G, F, 3]
    if np.abs(images).max(initial=0) > span:
        raise RuntimeError(f"space group {space_group}: an orbit leaves the frequency ball")
    img_keys = key(images)
    pos = np.searchsorted(keys, img_keys, sorter=sorter)
    target = sorter[np.clip(pos, 0, n - 1)]  # [G, F] node index of Rᵀω
    if not np.array_equal(keys[target], img_keys):
        raise RuntimeError(f"space group {space_group}: an orbit leaves the frequency ball")
    phase = np.exp(1j * _TWO_PI * (freqs @ ops.translations.T)).T  # [G, F]: e^{i2π ωᵀt_g}

    # connected components of the graph: the operations form a group modulo lattice translations, so
    # the component of ω is the set of its direct images {Rᵀω}; label it by its smallest node index
    # and check that every edge stays inside its component (i.e. that the graph really is closed)
    labels = target.min(axis=0)
    if not np.array_equal(labels[target], np.broadcast_to(labels, target.shape)):
        raise RuntimeError(f"space group {space_group}: the operations are not closed under composition")
    rep, labels = np.unique(labels, return_inverse=True)  # representatives sorted = orbit order
    num = len(rep)

    # propagate F from the representative along its direct edges (one step reaches the whole orbit
    # because the operations form a group modulo lattice translations; checked below)
    weight = np.full(n, np.nan + 0j)
    tgt_rep = target[:, rep]  # [G, num]
    ph_rep = phase[:, rep]
    for g in range(len(ops) - 1, -1, -1):  # g = 0 (identity) written last
        weight[tgt_rep[g]] = ph_rep[g]
    if np.isnan(weight).any():
        raise RuntimeError(f"space group {space_group}: the operations are not closed under composition")
    # every edge must satisfy F(Rᵀω) = e^{i2π ωᵀt} F(ω); a violation frustrates the whole orbit
    violation = np.abs(weight[target] - phase * weight[None, :]) > _PHASE_TOL  # [G, F]
    frustrated = np.zeros(num, dtype=bool)
    np.logical_or.at(frustrated, labels, violation.any(axis=0))
    return OrbitTable(freqs, labels, weight, frustrated, rep)


@overload
def reynolds_basis(space_group: int, frequencies: np.ndarray, frac: np.ndarray) -> np.ndarray: ...
@overload
def reynolds_basis(space_group: int, frequencies: np.ndarray, frac: torch.Tensor) -> torch.Tensor: ...
def reynolds_basis(
    space_group: int, frequencies: np.ndarray, frac: np.ndarray | torch.Tensor
) -> np.ndarray | torch.Tensor:
    """Group-averaged plane waves ``(Pφ_ξ)(x) = |G|⁻¹ Σ_g e^{i2π ξᵀ(R_g x + t_g)}`` (the test twin).

    Args:
        space_group: 1–230.
        frequencies: ``int [K, 3]`` the ``ξ``.
        frac: ``[N, 3]`` fractional coordinates.

    Returns:
        ``complex128 [N, K]`` (a tensor when ``frac`` is one).
    """
    ops = space_group_ops(space_group)
    as_tensor = isinstance(frac, torch.Tensor)
    x = frac.detach().cpu().double().numpy() if as_tensor else np.asarray(frac, dtype=np.float64)
    images = ops.apply(x)  # [G, N, 3]
    out = np.exp(1j * _TWO_PI * (images @ np.asarray(frequencies, dtype=np.float64).T)).mean(axis=0)
    return torch.from_numpy(out) if as_tensor else out


class SymmetryAdaptedBasis:
    """Invariant Fourier basis ``e_O`` of one space group, evaluated at fractional coordinates.

    ``SymmetryAdaptedBasis(space_group, num_basis)`` keeps the ``num_basis`` lowest-frequency
    non-frustrated orbits; ``SymmetryAdaptedBasis(space_group, max_frequency=r)`` keeps every
    non-frustrated orbit with ``|ω| ≤ r``. The orbit table is cached in memory and on disk
    (:func:`basis_cache_dir`, keyed by group, cut-off and :data:`BASIS_CACHE_VERSION`).

    ``normalization``: ``"unit"`` (default, the reference code's: ``e_O = Σ_{ω∈O} F(ω) e^{i2π ωᵀx}`` with
    ``|F(ω)| = 1``) or ``"orthonormal"`` (``e_O`` divided by ``√|O|``, unit L² norm on the torus).

    Calling it on fractional coordinates ``[N, 3]`` (NumPy array or tensor) returns the complex basis
    values ``[N, num_basis]`` (complex128 for float64 input, complex64 for float32 tensors);
    :meth:`real_features` returns ``[N, 2·num_basis]`` with Re and Im stacked.

    Attributes:
        space_group: 1–230 (standard setting of ``SpaceGroup.from_int_number``).
        num_basis: Number of basis functions ``K``.
        frequencies: ``int64 [F, 3]`` frequencies of the kept orbits.
        orbit_index: ``int64 [F]`` which basis function each frequency belongs to, in ``[0, K)``.
        coefficients: ``complex128 [F]`` ``F(ω)`` (``"unit"``) or ``F(ω)/√|O|`` (``"orthonormal"``).
        normalization: ``"unit"`` or ``"orthonormal"``.
        radius: Radius of the frequency ball used.
        frustrated: ``int64 [M, 3]`` frustrated frequencies inside that ball.
    """

    def __init__(
        self,
        space_group: int,
        num_basis: int | None = None,
        *,
        max_frequency: float | None = None,
        cache: bool = True,
        normalization: BasisNormalization = "unit",
    ) -> None:
        self.space_group = check_group_number(space_group)
        if normalization not in _NORMALIZATIONS:
            raise ConfigError("normalization", normalization, "'unit' or 'orthonormal'")
        self.normalization: BasisNormalization = normalization
        if (num_basis is None) == (max_frequency is None):
            raise ConfigError("num_basis", num_basis, "exactly one of num_basis and max_frequency")
        if num_basis is not None and (isinstance(num_basis, bool) or not isinstance(num_basis, int) or num_basis < 1):
            raise ConfigError("num_basis", num_basis, "a positive integer")
        if max_frequency is not None and not (isinstance(max_frequency, int | float) and max_frequency >= 0):
            raise ConfigError("max_frequency", max_frequency, "a number >= 0")
        tables = _load_tables(self.space_group, num_basis, max_frequency, cache)
        self.frequencies, self.orbit_index, self.coefficients, self.frustrated, radius = tables
        self.radius = float(radius)
        self.num_basis = int(self.orbit_index.max()) + 1 if len(self.orbit_index) else 0
        if normalization == "unit":  # the tables hold F(ω)/√|O| (cache layout unchanged): undo the 1/√|O|
            sizes = np.bincount(self.orbit_index, minlength=self.num_basis)
            self.coefficients = self.coefficients * np.sqrt(sizes[self.orbit_index])
        self._matrix: dict[tuple[torch.dtype, str], tuple[torch.Tensor, torch.Tensor]] = {}

    def __repr__(self) -> str:
        return (
            f"SymmetryAdaptedBasis(space_group={self.space_group}, num_basis={self.num_basis}, "
            f"frequencies={len(self.frequencies)}, radius={self.radius:.3g}, normalization={self.normalization!r})"
        )

    @property
    def orbit_sizes(self) -> np.ndarray:
        """``int64 [K]`` number of frequencies in each orbit."""
        return np.bincount(self.orbit_index, minlength=self.num_basis)

    @property
    def representatives(self) -> np.ndarray:
        """``int64 [K, 3]`` the representative ``ξ`` (smallest frequency) of each orbit."""
        first = np.full(self.num_basis, len(self.frequencies))
        np.minimum.at(first, self.orbit_index, np.arange(len(self.frequencies)))
        return self.frequencies[first]

    def matrix(self) -> np.ndarray:
        """Dense ``complex128 [F, K]`` map from plane waves to basis functions (``M_G`` of the paper)."""
        mat = np.zeros((len(self.frequencies), self.num_basis), dtype=np.complex128)
        mat[np.arange(len(self.frequencies)), self.orbit_index] = self.coefficients
        return mat

    def _torch_tables(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        key = (dtype, str(device))
        if key not in self._matrix:
            cdtype = torch.complex128 if dtype == torch.float64 else torch.complex64
            freqs = torch.as_tensor(self.frequencies, dtype=dtype, device=device)
            mat = torch.as_tensor(self.matrix(), device=device).to(cdtype)
            self._matrix[key] = (freqs, mat)
        return self._matrix[key]

    @overload
    def __call__(self, frac: np.ndarray) -> np.ndarray: ...
    @overload
    def __call__(self, frac: torch.Tensor) -> torch.Tensor: ...
    def __call__(self, frac: np.ndarray | torch.Tensor) -> np.ndarray | torch.Tensor:
        """Basis values ``e_O(x)``: ``[..., 3]`` → complex ``[..., K]``."""
        if isinstance(frac, torch.Tensor):
            x = frac if frac.is_floating_point() else frac.double()
            _check_frac_shape(tuple(x.shape))
            freqs, mat = self._torch_tables(x.dtype, x.device)
            waves = torch.polar(torch.ones((), dtype=x.dtype, device=x.device), _TWO_PI * (x @ freqs.T))
            return waves @ mat
        x = np.asarray(frac, dtype=np.float64)
        _check_frac_shape(x.shape)
        waves = np.exp(1j * _TWO_PI * (x @ self.frequencies.T.astype(np.float64)))
        return waves @ self.matrix()

    def real_features(self, frac: np.ndarray | torch.Tensor) -> np.ndarray | torch.Tensor:
        """``[..., 2K]``: real parts of the ``K`` basis values, then imaginary parts."""
        values = self(frac)
        if isinstance(values, torch.Tensor):
            return torch.cat([values.real, values.imag], dim=-1)
        return np.concatenate([np.real(values), np.imag(values)], axis=-1)


def _check_frac_shape(shape: tuple[int, ...]) -> None:
    if len(shape) < 1 or shape[-1] != 3:
        raise ValueError(f"fractional coordinates must have shape [..., 3], got {list(shape)}")


def _select(table: OrbitTable, num_basis: int | None, max_frequency: float | None) -> tuple[np.ndarray, ...]:
    keep_orbits = np.flatnonzero(~table.frustrated)
    if num_basis is not None:
        keep_orbits = keep_orbits[:num_basis]
    new_id = np.full(len(table.frustrated), -1)
    new_id[keep_orbits] = np.arange(len(keep_orbits))
    mask = new_id[table.orbit] >= 0
    sizes = np.bincount(table.orbit, minlength=len(table.frustrated))
    coeff = table.weight[mask] / np.sqrt(sizes[table.orbit[mask]])
    frustrated = table.frequencies[table.frustrated[table.orbit]]
    return table.frequencies[mask], new_id[table.orbit[mask]], coeff, frustrated


def _build(space_group: int, num_basis: int | None, max_frequency: float | None) -> tuple[np.ndarray, ...]:
    if max_frequency is not None:
        table = build_orbits(space_group, float(max_frequency))
        return (*_select(table, None, max_frequency), np.asarray(max_frequency, dtype=np.float64))
    assert num_basis is not None
    # the ball must hold num_basis non-frustrated orbits; grow it until it does
    # start just below the expected radius: a ball of volume V holds about V·√det(M⁻¹)/|G| orbits
    # (|G| counts centring translations, which remove that share of frequencies as absences)
    metric = reference_metric(space_group)
    volume = num_basis * len(space_group_ops(space_group)) / math.sqrt(np.linalg.det(np.linalg.inv(metric)))
    radius = max(1.0, 0.85 * (3 * volume / (4 * math.pi)) ** (1 / 3))
    while True:
        table = build_orbits(space_group, radius)
        if int((~table.frustrated).sum()) >= num_basis:
            return (*_select(table, num_basis, None), np.asarray(radius, dtype=np.float64))
        radius *= 1.25


@functools.lru_cache(maxsize=1024)
def _load_tables_cached(space_group: int, num_basis: int | None, max_frequency: float | None) -> tuple[np.ndarray, ...]:
    from iclr26_shared.io import atomic_write_bytes

    tag = f"K{num_basis}" if num_basis is not None else f"r{max_frequency:g}"
    path = basis_cache_dir() / f"sg{space_group:03d}-{tag}.npz"
    names = ("frequencies", "orbit_index", "coefficients", "frustrated", "radius")
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as data:
                tables = tuple(data[k] for k in names)
            if tables[0].ndim == 2 and len(tables[0]) == len(tables[1]) == len(tables[2]):
                return tables
        except (OSError, ValueError, KeyError):
            pass  # a corrupt cache entry is rebuilt below
    tables = _build(space_group, num_basis, max_frequency)
    buf = io.BytesIO()
    np.savez(buf, **dict(zip(names, tables, strict=True)))
    try:
        atomic_write_bytes(path, buf.getvalue())
    except OSError:
        pass  # a read-only cache directory only costs the rebuild next time
    return tables


def _load_tables(
    space_group: int, num_basis: int | None, max_frequency: float | None, cache: bool
) -> tuple[np.ndarray, ...]:
    if cache:
        return _load_tables_cached(space_group, num_basis, max_frequency)
    return _build(space_group, num_basis, max_frequency)
