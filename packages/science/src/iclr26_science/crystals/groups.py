"""Space-group operations in the standard setting, and the reference reciprocal metric.

An operation acts on fractional coordinates ``x ∈ [0, 1)³`` as ``g(x) = R x + t`` with ``R ∈ GL₃(ℤ)``
(integer matrix in the lattice basis) and ``t`` a fractional translation. The operations of group
``n`` are those of ``pymatgen.symmetry.groups.SpaceGroup.from_int_number(n)`` (the same as spglib's
default Hall setting of ``n``, i.e. the setting ``SpacegroupAnalyzer.get_refined_structure`` returns):
one representative per coset of the lattice translations, centring translations included.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from iclr26_shared.errors import ConfigError

__all__ = [
    "HEXAGONAL_GROUPS",
    "SpaceGroupOps",
    "check_group_number",
    "crystal_system",
    "reference_metric",
    "space_group_ops",
]

#: Groups whose standard setting uses a hexagonal lattice basis (trigonal and hexagonal, 143–194).
HEXAGONAL_GROUPS = range(143, 195)

_SYSTEMS = (
    (2, "triclinic"),
    (15, "monoclinic"),
    (74, "orthorhombic"),
    (142, "tetragonal"),
    (167, "trigonal"),
    (194, "hexagonal"),
    (230, "cubic"),
)


def check_group_number(space_group: object, field: str = "space_group") -> int:
    """Return ``space_group`` as an int in 1–230 or raise :class:`ConfigError` naming ``field``."""
    if isinstance(space_group, bool) or not isinstance(space_group, int | np.integer):
        raise ConfigError(field, space_group, "an integer space-group number in 1-230")
    if not 1 <= int(space_group) <= 230:
        raise ConfigError(field, space_group, "a space-group number in 1-230")
    return int(space_group)


def crystal_system(space_group: int) -> str:
    """The crystal system of group ``space_group`` (``"triclinic"`` … ``"cubic"``)."""
    n = check_group_number(space_group)
    return next(name for last, name in _SYSTEMS if n <= last)


def reference_metric(space_group: int) -> np.ndarray:
    """Reciprocal metric ``M`` ``[3, 3]`` used to order frequencies by ``|ω|² = ωᵀ M ω``.

    As in the paper's two precomputed matrix sets: the "cubic" basis (``M = I``) for groups 1–142 and
    195–230, whose standard-setting rotations are signed permutations, and the "hexagonal" basis for
    143–194 (reciprocal metric of a hexagonal lattice with ``a = c = 1``, ``γ = 120°``). Every rotation
    of the group preserves ``M`` (checked in :func:`space_group_ops`), so balls ``|ω| ≤ r`` are unions
    of whole orbits.
    """
    n = check_group_number(space_group)
    if n in HEXAGONAL_GROUPS:
        real = np.array([[1.0, -0.5, 0.0], [-0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
        return np.linalg.inv(real)
    return np.eye(3)


@dataclass(frozen=True)
class SpaceGroupOps:
    """The operations of one space group.

    Attributes:
        number: International number, 1–230.
        symbol: Hermann–Mauguin symbol.
        rotations: ``int64 [G, 3, 3]``, ``R`` in the lattice basis.
        translations: ``float64 [G, 3]``, ``t`` reduced to ``[0, 1)``.
    """

    number: int
    symbol: str
    rotations: np.ndarray
    translations: np.ndarray

    def __len__(self) -> int:
        return len(self.rotations)

    def apply(self, frac: np.ndarray) -> np.ndarray:
        """All images ``R_g x + t_g``: ``[N, 3]`` → ``[G, N, 3]`` (not wrapped into the cell)."""
        frac = np.asarray(frac, dtype=np.float64)
        return np.einsum("gij,nj->gni", self.rotations.astype(np.float64), frac) + self.translations[:, None, :]


@functools.lru_cache(maxsize=256)
def space_group_ops(space_group: int) -> SpaceGroupOps:
    """Operations of group ``space_group`` in pymatgen's ``SpaceGroup.from_int_number`` setting.

    Raises :class:`ConfigError` for a number outside 1–230.
    """
    n = check_group_number(space_group)
    from pymatgen.symmetry.groups import SpaceGroup

    sg = SpaceGroup.from_int_number(n)
    ops = sg.symmetry_ops
    rot = np.array([op.rotation_matrix for op in ops], dtype=np.float64)
    rot_int = np.rint(rot).astype(np.int64)
    if np.abs(rot - rot_int).max() > 1e-8:
        raise RuntimeError(f"space group {n}: pymatgen returned non-integer rotations")
    trans = np.mod(np.array([op.translation_vector for op in ops], dtype=np.float64), 1.0)
    trans[np.isclose(trans, 1.0, atol=1e-10)] = 0.0
    metric = reference_metric(n)
    for r in rot_int:
        # ω -> Rᵀω must preserve ωᵀMω:  R M Rᵀ = M.
        if not np.allclose(r @ metric @ r.T, metric, atol=1e-10):
            raise RuntimeError(f"space group {n}: a rotation does not preserve the reference metric")
    return SpaceGroupOps(n, str(sg.symbol), rot_int, trans)
