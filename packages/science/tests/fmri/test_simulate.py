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


def test_point_sampling_keeps_the_cache_key_of_cohorts_cached_before_the_switch() -> None:
    from dataclasses import asdict
    from importlib.metadata import version

    from iclr26_science.fmri.simulate import _cache_path
    from iclr26_shared.config import stable_hash

    spec = CohortSpec(n_subjects=3, length=50)
    before = {k: v for k, v in asdict(spec).items() if k != "sampling"}  # the spec's fields before the switch
    key = stable_hash({"spec": before, "neurolib": version("neurolib"), "format": 1}, 12)
    assert _cache_path(spec).name == f"hopf-{key}.npz"
    assert _cache_path(CohortSpec(n_subjects=3, length=50, sampling="mean")) != _cache_path(spec)
