"""Density simulation from atomic models and the degradations of the three restoration tasks.

* :func:`molmap` — Chimera ``molmap``'s Gaussian model (the CryoLVM targets, paper §4 / App. C):
  ``ρ(r) = Σ_a Z_a · G_σ(r − r_a)``, ``σ = sigma_factor · R`` (default ``1/(π√2) ≈ 0.225``, resolution
  ``R`` in Å), each Gaussian cut off at ``cutoff · σ``. Every voxel receives the Gaussian's *integral* over
  the voxel (a product of per-axis ``erf`` differences), so ``Σ ρ · v³ = Σ_a Z_a`` exactly when the atoms
  lie ``cutoff · σ`` inside the box.
* :func:`apply_bfactor` — ``F(s) · exp(−B s² / 4)`` (``s = |k|`` in 1/Å; ``B > 0`` blurs, ``B < 0`` sharpens).
* :func:`lowpass` — cosine-edged low-pass at a resolution.
* :func:`add_noise` — white or 1/|k| ("pink") Gaussian noise at a signal-to-noise ratio of variances.
* :func:`missing_wedge_mask` / :func:`apply_missing_wedge` — single-axis tilt series over ``±θ`` about y,
  beam along z: Fourier coefficients with ``|k_z| > tan θ · |k_x|`` are unmeasured (zeroed).

Arrays are ``[z, y, x]`` like :class:`~iclr26_science.cryoem.mrc.DensityMap`; Fourier masks use
:func:`numpy.fft.fftn`'s layout (DC at index 0).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch

from iclr26_science.cryoem.mrc import DensityMap
from iclr26_science.cryoem.structures import Atoms

__all__ = [
    "MOLMAP_SIGMA_FACTOR",
    "add_noise",
    "apply_bfactor",
    "apply_missing_wedge",
    "box_for",
    "frequency_grid",
    "lowpass",
    "missing_wedge_mask",
    "molmap",
]

#: Chimera molmap's default sigmaFactor: σ = R / (π √2).
MOLMAP_SIGMA_FACTOR = 1.0 / (math.pi * math.sqrt(2.0))


def box_for(
    atoms: Atoms, apix: float, *, pad: float = 8.0, multiple: int = 1, min_edge: int = 1
) -> tuple[tuple[int, int, int], tuple[float, float, float]]:
    """A cubic box (shape ``(n, n, n)``, origin in Å) holding ``atoms`` with ``pad`` Å around them;
    ``n`` is at least ``min_edge`` and rounded up to a multiple of ``multiple``; the atoms' bounding box is
    centred."""
    lo, hi = atoms.positions.min(0), atoms.positions.max(0)
    n = int(math.ceil((float((hi - lo).max()) + 2 * pad) / apix)) + 1
    n = multiple * int(math.ceil(max(n, min_edge) / multiple))
    centre = (lo + hi) / 2
    origin = centre - apix * (n - 1) / 2
    return (n, n, n), (float(origin[0]), float(origin[1]), float(origin[2]))


def _erf(x: np.ndarray) -> np.ndarray:
    return torch.special.erf(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))).numpy()


def _axis_weights(
    p: np.ndarray, origin: float, apix: float, n: int, sigma: float, cutoff: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-atom voxel indices ``[N, K]`` and Gaussian integrals over each voxel ``[N, K]`` along one axis."""
    k = int(math.ceil(2 * cutoff * sigma / apix)) + 2
    first = np.floor((p - origin - cutoff * sigma) / apix + 0.5).astype(np.int64)
    idx = first[:, None] + np.arange(k)[None, :]
    centres = origin + idx * apix
    s2 = sigma * math.sqrt(2.0)
    lo = np.clip(centres - apix / 2 - p[:, None], -cutoff * sigma, cutoff * sigma)
    hi = np.clip(centres + apix / 2 - p[:, None], -cutoff * sigma, cutoff * sigma)
    w = 0.5 * (_erf(hi / s2) - _erf(lo / s2))
    inside = (idx >= 0) & (idx < n)
    return np.where(inside, idx, 0), np.where(inside, w, 0.0)


def molmap(
    atoms: Atoms,
    resolution: float,
    apix: float | None = None,
    *,
    grid: DensityMap | None = None,
    shape: tuple[int, int, int] | None = None,
    origin: tuple[float, float, float] | None = None,
    sigma_factor: float = MOLMAP_SIGMA_FACTOR,
    cutoff: float = 5.0,
    pad: float = 8.0,
    chunk: int = 512,
) -> DensityMap:
    """Simulated density of ``atoms`` at ``resolution`` Å on a grid of ``apix`` Å voxels.

    The grid: ``grid=`` a map to compare with (its shape, origin and voxel size: the result lines up
    voxel for voxel, so ``fsc(molmap(atoms, 4.0, grid=target), target)`` works), or ``shape`` ``(nz, ny,
    nx)`` + ``origin`` ``(x, y, z)`` + ``apix``, or (default) the box :func:`box_for` fits around the atoms.
    Units: atomic number per Å³ (integrates to ``Σ Z`` for atoms well inside the box)."""
    if grid is not None:
        if shape is not None or origin is not None:
            raise ValueError("molmap: give grid= or shape=/origin=, not both")
        if apix is not None and not np.isclose(apix, grid.apix, rtol=1e-5):
            raise ValueError(f"molmap: apix {apix} differs from the grid's voxel size {grid.apix}")
        apix, shape, origin = grid.apix, tuple(grid.data.shape), tuple(float(v) for v in grid.origin)  # type: ignore[assignment]
    if apix is None:
        raise ValueError("molmap: give apix= (Å per voxel) or grid= (a map whose grid to use)")
    if resolution <= 0 or apix <= 0 or sigma_factor <= 0 or cutoff <= 0:
        raise ValueError(f"molmap: resolution, apix, sigma_factor and cutoff must be > 0 (got {resolution}, {apix}, "
                         f"{sigma_factor}, {cutoff})")  # fmt: skip
    if (shape is None) != (origin is None):
        raise ValueError("molmap: give shape= and origin= together (or grid=)")
    if shape is None or origin is None:
        shape, origin = box_for(atoms, apix, pad=pad)
    sigma = sigma_factor * resolution
    nz, ny, nx = shape
    vol = np.zeros(nz * ny * nx, dtype=np.float64)
    for s in range(0, len(atoms.positions), chunk):
        pos, z = atoms.positions[s : s + chunk], atoms.numbers[s : s + chunk].astype(np.float64)
        ix, wx = _axis_weights(pos[:, 0], origin[0], apix, nx, sigma, cutoff)
        iy, wy = _axis_weights(pos[:, 1], origin[1], apix, ny, sigma, cutoff)
        iz, wz = _axis_weights(pos[:, 2], origin[2], apix, nz, sigma, cutoff)
        w = z[:, None, None, None] * wz[:, :, None, None] * wy[:, None, :, None] * wx[:, None, None, :]
        flat = (iz[:, :, None, None] * ny + iy[:, None, :, None]) * nx + ix[:, None, None, :]
        vol += np.bincount(flat.ravel(), weights=w.ravel(), minlength=vol.size)
    data = (vol / apix**3).reshape(nz, ny, nx).astype(np.float32)
    return DensityMap(data, (apix, apix, apix), origin)


def frequency_grid(shape: tuple[int, ...], apix: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spatial frequencies ``(k_z, k_y, k_x)`` in 1/Å on the :func:`numpy.fft.fftn` grid of ``shape``."""
    kz, ky, kx = (np.fft.fftfreq(n, d=apix) for n in shape)
    return kz[:, None, None], ky[None, :, None], kx[None, None, :]


def _spatial_frequency(shape: tuple[int, ...], apix: float) -> np.ndarray:
    kz, ky, kx = frequency_grid(shape, apix)
    return np.sqrt(kz**2 + ky**2 + kx**2)


def _filter(data: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return np.real(np.fft.ifftn(np.fft.fftn(data) * gain)).astype(np.float32)


def apply_bfactor(data: np.ndarray, bfactor: float, apix: float) -> np.ndarray:
    """Multiply the Fourier coefficients by ``exp(−B s² / 4)`` (blur for B > 0, sharpen for B < 0)."""
    s = _spatial_frequency(data.shape, apix)
    return _filter(data, np.exp(-bfactor * s**2 / 4.0))


def lowpass(data: np.ndarray, resolution: float, apix: float, *, width: float = 0.02) -> np.ndarray:
    """Low-pass at ``1/resolution`` 1/Å with a raised-cosine edge ``width`` 1/Å wide (centred on the cut)."""
    s = _spatial_frequency(data.shape, apix)
    cut = 1.0 / resolution
    t = np.clip((s - (cut - width / 2)) / max(width, 1e-12), 0.0, 1.0)
    return _filter(data, 0.5 * (1 + np.cos(math.pi * t)))


def add_noise(
    data: np.ndarray, snr: float, rng: np.random.Generator, *, kind: Literal["white", "pink"] = "white"
) -> np.ndarray:
    """``data`` plus Gaussian noise of variance ``var(data) / snr``; ``pink`` shapes it by ``1/|k|``."""
    if snr <= 0:
        raise ValueError(f"add_noise: snr must be > 0, got {snr}")
    noise = rng.standard_normal(data.shape)
    if kind == "pink":
        s = _spatial_frequency(data.shape, 1.0)
        s[0, 0, 0] = np.inf
        noise = np.real(np.fft.ifftn(np.fft.fftn(noise) / np.maximum(s, 1.0 / max(data.shape))))
    elif kind != "white":
        raise ValueError(f"add_noise: kind must be 'white' or 'pink', got {kind!r}")
    noise *= math.sqrt(float(data.var()) / snr) / max(float(noise.std()), 1e-12)
    return (data + noise).astype(np.float32)


def missing_wedge_mask(shape: tuple[int, int, int], tilt_max: float) -> np.ndarray:
    """Boolean Fourier mask (``fftn`` layout) of the coefficients a ``±tilt_max``° tilt series about the
    y axis measures: ``|k_z| <= tan(tilt_max) · |k_x|`` (the ``k_x = k_z = 0`` line is always kept)."""
    if not 0.0 <= tilt_max <= 90.0:
        raise ValueError(f"missing_wedge_mask: tilt_max must be in [0, 90] degrees, got {tilt_max}")
    kz, _, kx = frequency_grid(shape, 1.0)
    kz = np.broadcast_to(kz, shape)
    kx = np.broadcast_to(kx, shape)
    if tilt_max >= 90.0:
        return np.ones(shape, dtype=bool)
    return (np.abs(kz) <= math.tan(math.radians(tilt_max)) * np.abs(kx) + 1e-12) | ((kz == 0) & (kx == 0))


def apply_missing_wedge(data: np.ndarray, tilt_max: float) -> np.ndarray:
    """``data`` with the Fourier coefficients outside the ``±tilt_max``° tilt range zeroed."""
    return _filter(data, missing_wedge_mask(data.shape, tilt_max).astype(np.float64))  # type: ignore[arg-type]
