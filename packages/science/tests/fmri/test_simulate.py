"""Simulated cohorts: shapes, preprocessing, the coupling effect, and the atomic on-disk cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iclr26_science.fmri import CohortSpec, simulate_cohort


def test_cohort_is_cached_and_coupling_shapes_fc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    spec = CohortSpec(n_subjects=10, length=100, seed=3)
    a = simulate_cohort(spec)
    assert len(a.scans) == 10 and a.scans[0].shape == (80, 100) and a.scans[0].dtype == np.float32
    np.testing.assert_allclose(a.scans[0].std(1), 1, atol=1e-4)
    files = list((tmp_path / "brain-semantoks").glob("hopf-*.npz"))
    assert len(files) == 1
    b = simulate_cohort(spec)  # read back from the cache
    np.testing.assert_array_equal(a.scans[4], b.scans[4])
    np.testing.assert_array_equal(a.targets["coupling"], b.targets["coupling"])
    iu = np.triu_indices(80, 1)
    mean_fc = [np.corrcoef(x)[iu].mean() for x in a.scans]
    assert np.corrcoef(mean_fc, a.targets["coupling"])[0, 1] > 0.5  # stronger coupling, stronger FC
    other = simulate_cohort(CohortSpec(n_subjects=2, length=100, seed=4))
    assert not np.allclose(other.scans[0], a.scans[0])
    assert len(list((tmp_path / "brain-semantoks").glob("hopf-*.npz"))) == 2


def test_bold_sampling_point_or_boxcar_mean_of_each_tr_window() -> None:
    """The same trajectory (same seed, dt and duration) read at tr = dt gives every step x_t; at tr = 2 dt,
    "point" must be x_{2k+1} (the last step of each window) and "mean" (x_{2k} + x_{2k+1}) / 2."""
    from iclr26_science.fmri import simulate_subject
    from iclr26_shared.errors import DataError

    rng = np.random.default_rng(0)
    cmat = rng.uniform(0, 1, (5, 5))
    np.fill_diagonal(cmat, 0.0)
    kw = dict(coupling=0.5, bifurcation=-0.2, frequency=0.05, noise=0.02, dt=0.1, burn_in=2.0, seed=7)
    steps = simulate_subject(cmat, np.full((5, 5), 50.0), length=40, tr=0.1, **kw)  # type: ignore[arg-type]
    point = simulate_subject(cmat, np.full((5, 5), 50.0), length=20, tr=0.2, **kw)  # type: ignore[arg-type]
    mean = simulate_subject(cmat, np.full((5, 5), 50.0), length=20, tr=0.2, sampling="mean", **kw)  # type: ignore[arg-type]
    assert np.array_equal(point, steps[:, 1::2])
    np.testing.assert_allclose(mean, (steps[:, 0::2] + steps[:, 1::2]) / 2, rtol=1e-12, atol=1e-15)
    with pytest.raises(DataError, match="sampling must be"):
        simulate_subject(cmat, cmat, length=4, sampling="median", **kw)  # type: ignore[arg-type]


def test_fields_at_their_defaults_stay_out_of_the_cache_key() -> None:
    from dataclasses import asdict
    from importlib.metadata import version

    from iclr26_science.fmri.simulate import _cache_path
    from iclr26_shared.config import stable_hash

    spec = CohortSpec(n_subjects=3, length=50)
    later = ("sampling", "scans_per_subject", "connectome_jitter", "frequency_spread", "bifurcation_spread")
    before = {k: v for k, v in asdict(spec).items() if k not in later}  # the spec's fields before the switches
    key = stable_hash({"spec": before, "neurolib": version("neurolib"), "format": 2}, 12)
    assert _cache_path(spec).name == f"hopf-{key}.npz"  # format 2: the s-unit noise (issue 37)
    assert _cache_path(CohortSpec(n_subjects=3, length=50, sampling="mean")) != _cache_path(spec)


def test_hopf_euler_equals_neurolib_on_scalar_parameters() -> None:
    """The vectorised integrator that takes per-region parameters is neurolib's scheme: on scalar a and ω
    (where neurolib's Hopf kernel runs too, same seed) the two trajectories agree to float rounding."""
    from iclr26_science.fmri import simulate_subject
    from iclr26_science.fmri.simulate import _hcp_structure

    cmats, dmats = _hcp_structure(False)
    kw = dict(coupling=1.3, bifurcation=-0.2, noise=0.02, length=40, burn_in=10.0, seed=5)
    ref = simulate_subject(cmats[0], dmats[0], frequency=0.05, **kw)  # type: ignore[arg-type]
    ours = simulate_subject(cmats[0], dmats[0], frequency=np.full(80, 0.05), **kw)  # type: ignore[arg-type]
    assert np.abs(ref).max() > 1e-3
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_hopf_euler_steps_are_the_equation_by_hand() -> None:
    """Two regions, two steps of the documented update, written out with the same noise draws."""
    from iclr26_science.fmri import hopf_euler

    c = np.array([[0.0, 1.0], [0.5, 0.0]])
    a, f, k, noise, dt = np.array([-0.2, -0.3]), np.array([0.05, 0.06]), 0.8, 0.02, 0.1
    x = hopf_euler(c, coupling=k, bifurcation=a, frequency=f, noise=noise, steps=3, dt=dt, seed=11)
    rs = np.random.RandomState(11)
    nx, ny = rs.standard_normal((2, 3)), rs.standard_normal((2, 3))
    w = 2 * np.pi * f
    xs, ys, u, v, got = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2), []
    for i in range(3):  # the module docstring's equation in s, Euler steps, the noise one step late
        r2 = xs**2 + ys**2
        dx = (a - r2) * xs - w * ys + k * (c @ xs - c.sum(1) * xs) + u
        dy = (a - r2) * ys + w * xs + v
        xs, ys = xs + dt * dx, ys + dt * dy
        u, v = noise * np.sqrt(dt) / dt * nx[:, i], noise * np.sqrt(dt) / dt * ny[:, i]
        got.append(xs)
    np.testing.assert_allclose(x, np.stack(got, 1), rtol=1e-12, atol=1e-20)
    assert np.all(x[:, 0] == 0) and np.all(x[:, 1] != 0)  # the noise reaches x one step after it is drawn


def test_subject_specific_cohort_scans_share_a_subject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several scans per subject, subject-major, same parameters and fresh noise; the subject's own regional
    structure makes its two scans' spectra closer to each other than to another subject's."""
    from iclr26_science.fmri import spectral_features
    from iclr26_science.fmri.simulate import _cache_path
    from iclr26_shared.errors import DataError

    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    spec = CohortSpec(n_subjects=8, length=200, seed=2, scans_per_subject=2, connectome_jitter=0.5,
                      frequency_spread=0.5, bifurcation_spread=0.3, sampling="mean")  # fmt: skip
    c = simulate_cohort(spec)
    assert len(c.scans) == 16 and c.subjects.tolist() == [s for s in range(8) for _ in range(2)]
    assert c.targets["scan"].tolist() == [0, 1] * 8
    assert np.array_equal(c.targets["coupling"][0::2], c.targets["coupling"][1::2])
    assert not np.allclose(c.scans[0], c.scans[1])
    base = simulate_cohort(CohortSpec(n_subjects=8, length=200, seed=2, sampling="mean"))
    np.testing.assert_array_equal(base.targets["coupling"], c.targets["coupling"][0::2])  # the draws stay

    # the regions' own frequencies: each ROI's spectral centroid, centred across scans, correlates between a
    # subject's two scans (measured 0.23) and not between subjects (−0.10)
    cent = np.stack([spectral_features(x, 2.0)[:80] for x in c.scans])
    r = np.corrcoef(cent - cent.mean(0))
    same = [r[2 * s, 2 * s + 1] for s in range(8)]
    other = [r[2 * s, 2 * t + 1] for s in range(8) for t in range(8) if s != t]
    assert np.mean(same) > np.mean(other) + 0.2
    again = simulate_cohort(spec)  # from the cache, subjects and all
    assert again.subjects.tolist() == c.subjects.tolist() and np.array_equal(again.scans[3], c.scans[3])
    assert _cache_path(spec) != _cache_path(CohortSpec(n_subjects=8, length=200, seed=2, sampling="mean"))
    with pytest.raises(DataError, match="connectome_jitter"):
        CohortSpec(n_subjects=2, length=50, connectome_jitter=-1.0)
    with pytest.raises(DataError, match="scans_per_subject"):
        CohortSpec(n_subjects=2, length=50, scans_per_subject=0)


@pytest.mark.parametrize("frequency", [0.04, 0.08])
def test_weakly_damped_regions_oscillate_at_their_intrinsic_frequency(frequency: float) -> None:
    """In the s-unit model a region with a = −0.05/s and small noise is a lightly damped oscillator: the
    spectrum of x peaks at its intrinsic frequency (the pre-issue-37 noise scaling saturated the cubic term
    and flattened the spectrum, whatever the frequency)."""
    from scipy import signal

    from iclr26_science.fmri import simulate_subject

    cmat = np.zeros((4, 4))
    x = simulate_subject(cmat, cmat, coupling=0.0, bifurcation=-0.05, frequency=frequency, noise=0.02, length=2000,
                         tr=0.5, burn_in=20.0, seed=3)  # fmt: skip
    f, p = signal.welch(x, fs=2.0, nperseg=400)
    peak = f[np.argmax(p.mean(0))]
    assert abs(peak - frequency) <= 0.006


def test_spectral_features_of_a_sine_and_of_noise() -> None:
    """A 0.05 Hz sine at TR 2 s has its centroid at 0.05 Hz and a narrow width; white noise's centroid is the
    middle of the band's Welch frequencies (a flat spectrum), its width their spread."""
    from iclr26_science.fmri import spectral_features

    t = np.arange(400) * 2.0
    x = np.stack([np.sin(2 * np.pi * 0.05 * t), np.random.default_rng(0).standard_normal(400)])
    feats = spectral_features(x, 2.0)
    assert feats.shape == (4,)
    assert abs(feats[0] - 0.05) < 0.002 and feats[2] < 0.01
    f = np.fft.rfftfreq(40, d=2.0)
    band = f[(f >= 0.01) & (f <= 0.1)]  # 0.0125 ... 0.1 Hz
    assert abs(feats[1] - band.mean()) < 0.01 and abs(feats[3] - band.std()) < 0.01
