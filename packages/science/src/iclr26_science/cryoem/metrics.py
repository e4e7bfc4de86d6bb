"""Map-quality metrics of the paper's tables: FSC curve and resolution, real-space correlation (CC).

* ``FSC(k) = Re Σ_{shell k} F₁ G₁* / sqrt(Σ_{shell k} |F₁|² · Σ_{shell k} |G₁|²)`` over Fourier shells of
  width ``1 / (N · apix)`` (``N`` the largest box edge); the resolution is ``1/k`` where the curve first
  falls below a threshold (0.143 for half maps, 0.5 for map vs model, as in phenix.mtriage), linearly
  interpolated between shells; a curve that never falls below it reports the Nyquist limit ``2 · apix``.
* ``CC_box``: Pearson correlation over every voxel; ``CC_mask``: over the voxels of a mask (by default
  the voxels within ``radius`` Å of an atom, phenix.map_model_cc's model mask).
* Sharpening-sensitive spectrum metrics (FSC cannot see an isotropic filter, so they complete it). With
  ``A(k)`` the RMS Fourier amplitude of shell ``k`` (:func:`radial_amplitude`) and the log ratio
  ``r_k = ln A_map(k) − ln A_target(k)`` over the shells ``K`` between ``1/low`` and ``1/resolution``:

  - :func:`amplitude_deviation` ``D = sqrt(mean_{k∈K} (r_k − r̄)²)``, ``r̄ = mean_{k∈K} r_k``: 0 when the
    map's amplitude falloff has the target's shape (a global scale does not count, as for CC); a map that
    is too blurred or too sharp raises it. An extra B factor gives ``r_k ≈ −B s_k²/4 + c``, so
    ``D ≈ (B/4) · std_{k∈K}(s_k²)``.
  - :func:`relative_bfactor` ``ΔB = −4 · slope`` of the least-squares line ``r_k ≈ a + slope · s_k²``:
    the B factor (Å²) by which the map is blurrier (> 0) or sharper (< 0) than the target.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from iclr26_science.cryoem.structures import Atoms

if TYPE_CHECKING:
    from iclr26_science.cryoem.mrc import DensityMap

__all__ = [
    "amplitude_deviation",
    "atom_mask",
    "cc",
    "fsc",
    "fsc_resolution",
    "radial_amplitude",
    "relative_bfactor",
    "shell_index",
]


def shell_index(shape: tuple[int, ...], apix: float) -> tuple[np.ndarray, np.ndarray]:
    """Shell number of every Fourier coefficient (``fftn`` layout) and each shell's frequency (1/Å)."""
    n = max(shape)
    kz, ky, kx = (np.fft.fftfreq(m, d=apix) for m in shape)
    s = np.sqrt(kz[:, None, None] ** 2 + ky[None, :, None] ** 2 + kx[None, None, :] ** 2)
    step = 1.0 / (n * apix)
    idx = np.rint(s / step).astype(np.int64)
    nshell = n // 2 + 1
    return idx, np.arange(nshell) * step


def radial_amplitude(data: np.ndarray, apix: float) -> tuple[np.ndarray, np.ndarray]:
    """``(frequencies [1/Å], RMS Fourier amplitude per shell)`` up to Nyquist (shells of :func:`shell_index`)."""
    idx, freqs = shell_index(data.shape, apix)
    keep = idx < len(freqs)
    power = np.bincount(idx[keep], weights=(np.abs(np.fft.fftn(data.astype(np.float64))) ** 2)[keep],
                        minlength=len(freqs))  # fmt: skip
    count = np.bincount(idx[keep], minlength=len(freqs))
    return freqs, np.sqrt(power / np.maximum(count, 1))


def _voxels(m: np.ndarray | DensityMap) -> tuple[np.ndarray, float | None]:
    data = getattr(m, "data", None)
    if isinstance(data, np.ndarray) and hasattr(m, "apix"):
        return data, float(m.apix)  # pyright: ignore[reportAttributeAccessIssue]
    return np.asarray(m), None


def fsc(
    a: np.ndarray | DensityMap, b: np.ndarray | DensityMap, apix: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Fourier shell correlation of two maps on one grid: ``(frequencies [1/Å], fsc)`` up to Nyquist.

    ``a``/``b``: arrays ``[nz, ny, nx]`` (then ``apix`` is required) or :class:`DensityMap` s (``apix``
    from them; they must agree). Maps on different grids are a ValueError (put a model on the map's grid
    with ``molmap(atoms, resolution, grid=target)``)."""
    a, apix_a = _voxels(a)
    b, apix_b = _voxels(b)
    known = {x for x in (apix_a, apix_b) if x is not None}
    if len(known) == 2 and not math.isclose(*known, rel_tol=1e-5):
        raise ValueError(f"fsc: maps of different voxel sizes {apix_a} and {apix_b} Å")
    if apix is None:
        if not known:
            raise ValueError("fsc: give apix= (Å per voxel) for plain arrays")
        apix = next(iter(known))
    if a.shape != b.shape:
        raise ValueError(
            f"fsc: maps of different shapes {a.shape} and {b.shape} (simulate on the target's grid: "
            "molmap(atoms, resolution, grid=target))"
        )
    fa, fb = np.fft.fftn(a.astype(np.float64)), np.fft.fftn(b.astype(np.float64))
    idx, freqs = shell_index(a.shape, apix)
    keep = idx < len(freqs)
    i = idx[keep]
    num = np.bincount(i, weights=np.real(fa * np.conj(fb))[keep], minlength=len(freqs))
    pa = np.bincount(i, weights=(np.abs(fa) ** 2)[keep], minlength=len(freqs))
    pb = np.bincount(i, weights=(np.abs(fb) ** 2)[keep], minlength=len(freqs))
    den = np.sqrt(pa * pb)
    return freqs, np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def fsc_resolution(freqs: np.ndarray, curve: np.ndarray, threshold: float = 0.143) -> float:
    """Resolution (Å) where the FSC curve first falls below ``threshold`` (shell 0 skipped), interpolated;
    the Nyquist limit ``1 / freqs[-1]`` if it never does."""
    for k in range(1, len(curve)):
        if curve[k] < threshold:
            f0, f1, c0, c1 = freqs[k - 1], freqs[k], curve[k - 1], curve[k]
            f = f1 if c0 == c1 else f0 + (c0 - threshold) / (c0 - c1) * (f1 - f0)
            return float(1.0 / f) if f > 0 else math.inf
    return float(1.0 / freqs[-1])


def cc(a: np.ndarray, b: np.ndarray, mask: np.ndarray | None = None) -> float:
    """Pearson correlation of two maps over all voxels (CC_box) or over ``mask`` (CC_mask)."""
    if a.shape != b.shape:
        raise ValueError(f"cc: maps of different shapes {a.shape} and {b.shape}")
    x, y = a.astype(np.float64), b.astype(np.float64)
    if mask is not None:
        x, y = x[mask], y[mask]
    x, y = x - x.mean(), y - y.mean()
    den = math.sqrt(float((x * x).sum() * (y * y).sum()))
    return float((x * y).sum() / den) if den > 0 else 0.0


def atom_mask(
    atoms: Atoms, shape: tuple[int, int, int], apix: float, origin: tuple[float, float, float], radius: float = 3.0
) -> np.ndarray:
    """Boolean ``[z, y, x]`` mask of the voxels whose centre lies within ``radius`` Å of an atom."""
    mask = np.zeros(shape, dtype=bool)
    r = int(math.ceil(radius / apix))
    off = np.arange(-r, r + 1)
    dz, dy, dx = np.meshgrid(off, off, off, indexing="ij")
    for p in atoms.positions:
        c = np.rint((p - np.asarray(origin)) / apix).astype(int)  # (x, y, z) voxel of the atom
        iz, iy, ix = c[2] + dz, c[1] + dy, c[0] + dx
        pos = np.stack([ix, iy, iz], -1) * apix + np.asarray(origin)
        near = ((pos - p) ** 2).sum(-1) <= radius**2
        ok = near & (iz >= 0) & (iz < shape[0]) & (iy >= 0) & (iy < shape[1]) & (ix >= 0) & (ix < shape[2])
        mask[iz[ok], iy[ok], ix[ok]] = True
    return mask


def _log_ratio(
    a: np.ndarray | DensityMap, target: np.ndarray | DensityMap, apix: float | None, resolution: float, low: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(s_k², r_k)`` over the shells between ``1/low`` and ``1/resolution`` where both amplitudes are > 0."""
    x, apix_a = _voxels(a)
    y, apix_t = _voxels(target)
    if apix_a is not None and apix_t is not None and not math.isclose(apix_a, apix_t, rel_tol=1e-5):
        raise ValueError(f"amplitude metrics: maps of different voxel sizes {apix_a} and {apix_t} Å")
    apix = apix or apix_a or apix_t
    if apix is None:
        raise ValueError("amplitude metrics: give apix= (Å per voxel) for plain arrays")
    if x.shape != y.shape:
        raise ValueError(f"amplitude metrics: maps of different shapes {x.shape} and {y.shape}")
    if not 0 < resolution < low:
        raise ValueError(f"amplitude metrics: need 0 < resolution < low, got resolution {resolution}, low {low}")
    freqs, amp_a = radial_amplitude(x, apix)
    _, amp_t = radial_amplitude(y, apix)
    sel = (freqs >= 1.0 / low) & (freqs <= 1.0 / resolution) & (amp_a > 0) & (amp_t > 0)
    if sel.sum() < 2:
        raise ValueError(
            f"amplitude metrics: fewer than 2 shells between {low} Å and {resolution} Å at {apix} Å/voxel "
            f"in a box of {max(x.shape)}"
        )
    return freqs[sel] ** 2, np.log(amp_a[sel]) - np.log(amp_t[sel])


def amplitude_deviation(
    a: np.ndarray | DensityMap,
    target: np.ndarray | DensityMap,
    apix: float | None = None,
    *,
    resolution: float,
    low: float = 10.0,
) -> float:
    """RMS deviation of the map's log radial amplitude from the target's, offset removed (see the module
    docstring): 0 for a spectrum of the target's shape, larger for a blurrier or sharper map."""
    _, r = _log_ratio(a, target, apix, resolution, low)
    return float(np.sqrt(np.mean((r - r.mean()) ** 2)))


def relative_bfactor(
    a: np.ndarray | DensityMap,
    target: np.ndarray | DensityMap,
    apix: float | None = None,
    *,
    resolution: float,
    low: float = 10.0,
) -> float:
    """The B factor (Å²) of the map's falloff relative to the target's: ``> 0`` blurrier, ``< 0`` sharper."""
    s2, r = _log_ratio(a, target, apix, resolution, low)
    return float(-4.0 * np.polyfit(s2, r, 1)[0])
