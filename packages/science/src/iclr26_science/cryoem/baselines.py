"""Classical map post-processing baselines: global B-factor sharpening and LocScale-like local scaling.

* :func:`guinier_bfactor` fits ``ln A(s) = a − (B/4) s²`` to the radially averaged Fourier amplitude
  between ``1/low`` and ``1/resolution`` (the Rosenthal–Henderson auto-B fit).
* :func:`global_sharpen` applies ``exp(−(B_target − B_fit) s² / 4)`` so the map's falloff becomes
  ``B_target`` (0 = flat, the classical auto-sharpening; the runs use the training targets' mean falloff),
  then low-passes at the resolution.
* :func:`local_scale` is LocScale-like (Jakobi et al. 2017) without an atomic model: overlapping windows
  (a cosine taper each) get their radial amplitude profile rescaled to a reference profile's *shape*
  (keeping the window's own low-resolution level), low-passed at the resolution, and are fused with
  Gaussian weights (:func:`~iclr26_science.cryoem.tiling.tile_starts`).
"""

from __future__ import annotations

import numpy as np

from iclr26_science.cryoem.metrics import radial_amplitude, shell_index
from iclr26_science.cryoem.simulate import apply_bfactor, lowpass
from iclr26_science.cryoem.tiling import gaussian_window, tile_starts

__all__ = ["global_sharpen", "guinier_bfactor", "local_scale", "radial_amplitude"]


def guinier_bfactor(data: np.ndarray, apix: float, resolution: float, *, low: float = 10.0) -> float:
    """The B factor (Å²) of the map's amplitude falloff between ``low`` Å and ``resolution`` Å."""
    freqs, amp = radial_amplitude(data, apix)
    sel = (freqs >= 1.0 / low) & (freqs <= 1.0 / resolution) & (amp > 0)
    if sel.sum() < 2:
        raise ValueError(f"guinier_bfactor: fewer than 2 shells between {low} Å and {resolution} Å at {apix} Å/voxel")
    slope = np.polyfit(freqs[sel] ** 2, np.log(amp[sel]), 1)[0]
    return float(-4.0 * slope)


def global_sharpen(data: np.ndarray, apix: float, resolution: float, *, b_target: float = 0.0) -> np.ndarray:
    """Globally sharpen (or blur) to the falloff ``b_target`` and low-pass at ``resolution``."""
    b_fit = guinier_bfactor(data, apix, resolution)
    return lowpass(apply_bfactor(data, b_target - b_fit, apix), resolution, apix)


def _taper(n: int) -> np.ndarray:
    w = 0.5 - 0.5 * np.cos(2 * np.pi * (np.arange(n) + 0.5) / n)
    return w[:, None, None] * w[None, :, None] * w[None, None, :]


def local_scale(
    data: np.ndarray, apix: float, resolution: float, reference_profile: np.ndarray, *, window: int = 16
) -> np.ndarray:
    """LocScale-like local amplitude scaling. ``reference_profile``: RMS amplitude per shell of a reference
    (``window``-sized) map, e.g. :func:`radial_amplitude` averaged over training targets' windows."""
    if any(s < window for s in data.shape):
        raise ValueError(f"local_scale: map {data.shape} is smaller than the window {window}")
    taper = _taper(window)
    idx, freqs = shell_index((window,) * 3, apix)
    if len(reference_profile) != len(freqs):
        raise ValueError(f"local_scale: reference profile has {len(reference_profile)} shells, window has {len(freqs)}")
    cut = freqs <= 1.0 / resolution
    ref = np.where(cut, reference_profile / max(float(reference_profile[1]), 1e-12), 0.0)
    pad = window // 2  # every voxel then lies within window/4 of some window's centre (taper >= 1/2)
    shape = data.shape
    data = np.pad(data.astype(np.float64), pad)
    out = np.zeros(data.shape, dtype=np.float64)
    norm = np.zeros(data.shape, dtype=np.float64)
    weight = gaussian_window(window)
    keep = idx < len(freqs)
    count = np.maximum(np.bincount(idx[keep], minlength=len(freqs)), 1)
    for z in tile_starts(data.shape[0], window, window // 2):
        for y in tile_starts(data.shape[1], window, window // 2):
            for x in tile_starts(data.shape[2], window, window // 2):
                win = data[z : z + window, y : y + window, x : x + window]
                f = np.fft.fftn(win * taper)
                amp = np.sqrt(np.bincount(idx[keep], weights=(np.abs(f) ** 2)[keep], minlength=len(freqs)) / count)
                rel = amp / max(float(amp[1]), 1e-12)
                scale = np.where(rel > 0, ref / np.where(rel > 0, rel, 1.0), 0.0)
                scale[0] = 1.0
                g = np.where(keep, scale[np.minimum(idx, len(freqs) - 1)], 0.0)
                sharp = np.real(np.fft.ifftn(f * g))  # ≈ taper · scaled window
                out[z : z + window, y : y + window, x : x + window] += weight * sharp
                norm[z : z + window, y : y + window, x : x + window] += weight * taper
    fused = out / np.maximum(norm, 1e-12)
    return fused[pad : pad + shape[0], pad : pad + shape[1], pad : pad + shape[2]].astype(np.float32)
