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
* :class:`WienerFilter` is the MSE-optimal isotropic linear filter fitted on (input, target) pairs: in each
  band ``b`` of spatial frequency ``|s|`` (``bands`` equal bands from 0 to Nyquist ``1/(2·apix)``),

      g_b = Σ Re(X(s) · conj(Y(s))) / Σ |X(s)|²     (sums over every pair and every ``s`` in band b),

  the least-squares gain of ``Y ≈ g_b X`` (by Parseval, the filter ``F⁻¹[g(|s|) X]`` with the least summed
  squared error over the training voxels). Not a sharpening method: a diagnostic of what an MSE objective
  rewards (at low SNR it attenuates the noisy high frequencies, i.e. it *blurs*: ``g_b`` is the signal's
  share ``S/(S+N)`` of each band's power when the input is the target plus independent noise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iclr26_science.cryoem.metrics import radial_amplitude, shell_index
from iclr26_science.cryoem.simulate import apply_bfactor, lowpass
from iclr26_science.cryoem.tiling import gaussian_window, tile_starts

__all__ = ["WienerFilter", "global_sharpen", "guinier_bfactor", "local_scale", "radial_amplitude"]


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


def _band_of(shape: tuple[int, ...], apix: float, bands: int) -> np.ndarray:
    """Band index (0 .. bands-1) of every ``fftn`` coefficient: ``|s|`` in ``bands`` equal bands up to ``1/(2·apix)``
    (corner frequencies beyond Nyquist join the last band)."""
    kz, ky, kx = (np.fft.fftfreq(m, d=apix) for m in shape)
    s = np.sqrt(kz[:, None, None] ** 2 + ky[None, :, None] ** 2 + kx[None, None, :] ** 2)
    return np.minimum((s * (2.0 * apix * bands)).astype(np.int64), bands - 1)


@dataclass(frozen=True)
class WienerFilter:
    """The per-band least-squares gain ``g`` (see the module docstring) at voxel size ``apix`` (Å); call it on a
    map (any box) to filter it. Fit with :meth:`fit`."""

    gain: np.ndarray
    apix: float

    @classmethod
    def fit(
        cls, inputs: Sequence[np.ndarray], targets: Sequence[np.ndarray], apix: float, *, bands: int = 40
    ) -> WienerFilter:
        """``inputs[i]`` and ``targets[i]``: 3-D maps on one grid (boxes may differ between pairs). A band no
        coefficient falls in gets gain 0."""
        if len(inputs) != len(targets) or not inputs:
            raise ValueError(
                f"WienerFilter.fit: need as many inputs as targets, >= 1 (got {len(inputs)}, {len(targets)})"
            )
        num, den = np.zeros(bands), np.zeros(bands)
        for x, y in zip(inputs, targets, strict=True):
            if x.shape != y.shape or x.ndim != 3:
                raise ValueError(f"WienerFilter.fit: input {x.shape} and target {y.shape} must be one 3-D grid")
            fx, fy = np.fft.fftn(x.astype(np.float64)), np.fft.fftn(y.astype(np.float64))
            b = _band_of(x.shape, apix, bands).ravel()
            num += np.bincount(b, (fx * fy.conj()).real.ravel(), bands)
            den += np.bincount(b, (np.abs(fx) ** 2).ravel(), bands)
        return cls(np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0), float(apix))

    def __call__(self, data: np.ndarray) -> np.ndarray:
        b = _band_of(data.shape, self.apix, len(self.gain))
        return np.real(np.fft.ifftn(np.fft.fftn(data.astype(np.float64)) * self.gain[b])).astype(np.float32)
