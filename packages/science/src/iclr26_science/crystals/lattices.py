"""Random lattices compatible with a space group's crystal system, and periodic orbit distances."""

from __future__ import annotations

import numpy as np

from iclr26_science.crystals.groups import crystal_system, space_group_ops

__all__ = ["lattice_from_parameters", "orbit_distance", "random_lattice"]


def lattice_from_parameters(a: float, b: float, c: float, alpha: float, beta: float, gamma: float) -> np.ndarray:
    """Lattice vectors as rows ``[3, 3]`` (Å) from lengths and angles (degrees); ``a`` along x, ``b`` in
    the xy plane (the pymatgen/ITA orientation)."""
    al, be, ga = np.radians([alpha, beta, gamma])
    cx = c * np.cos(be)
    cy = c * (np.cos(al) - np.cos(be) * np.cos(ga)) / np.sin(ga)
    cz2 = c**2 - cx**2 - cy**2
    if cz2 <= 0:
        raise ValueError(f"angles ({alpha}, {beta}, {gamma}) do not form a lattice")
    return np.array([[a, 0.0, 0.0], [b * np.cos(ga), b * np.sin(ga), 0.0], [cx, cy, np.sqrt(cz2)]])


def random_lattice(
    space_group: int, rng: np.random.Generator, lengths: tuple[float, float] = (3.0, 10.0)
) -> np.ndarray:
    """A random lattice ``[3, 3]`` obeying the metric constraints of ``space_group``'s crystal system
    in its standard setting (monoclinic: unique axis b; trigonal/hexagonal: hexagonal axes)."""
    a, b, c = rng.uniform(*lengths, size=3)
    alpha = beta = gamma = 90.0
    system = crystal_system(space_group)
    if system == "triclinic":
        while True:
            alpha, beta, gamma = rng.uniform(70.0, 110.0, size=3)
            try:
                return lattice_from_parameters(a, b, c, alpha, beta, gamma)
            except ValueError:
                continue
    if system == "monoclinic":
        beta = rng.uniform(90.0, 120.0)
    elif system == "tetragonal":
        b = a
    elif system in ("trigonal", "hexagonal"):
        b, gamma = a, 120.0
    elif system == "cubic":
        b = c = a
    return lattice_from_parameters(a, b, c, alpha, beta, gamma)


def orbit_distance(space_group: int, lattice: np.ndarray, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """Minimal periodic Cartesian distance (Å) from ``x1`` to the orbit of ``x2``:
    ``min_g min_n |(x1 − g(x2) − n) L|`` over the group's operations and ``n ∈ ℤ³`` (searched in the
    27 cells around the wrapped difference). ``x1, x2``: ``[B, 3]``; ``lattice``: ``[3, 3]`` or
    ``[B, 3, 3]``. Returns ``[B]``."""
    ops = space_group_ops(space_group)
    images = ops.apply(x2)  # [G, B, 3]
    diff = x1[None] - images
    diff -= np.rint(diff)
    shifts = np.stack(np.meshgrid(*[np.arange(-1, 2)] * 3, indexing="ij"), -1).reshape(-1, 3)
    cand = diff[:, :, None, :] + shifts[None, None]  # [G, B, 27, 3]
    lat = np.broadcast_to(lattice, (x1.shape[0], 3, 3))
    cart = np.einsum("gbsi,bij->gbsj", cand, lat)
    return np.linalg.norm(cart, axis=-1).min(axis=(0, 2))
