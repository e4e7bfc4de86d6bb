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
