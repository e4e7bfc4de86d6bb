"""Subject-level splits never leak; the linear probe and identification behave at the extremes."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26_science.fmri import (
    balanced_accuracy,
    identification_accuracy,
    linear_probe_cv,
    quantile_classes,
    subject_folds,
)
from iclr26_shared.errors import DataError


def test_subject_folds_never_leak() -> None:
    subjects = np.repeat(np.arange(13), 3)  # 3 windows per subject
    folds = subject_folds(subjects, 4, seed=1)
    seen = np.concatenate([te for _, te in folds])
    assert sorted(seen.tolist()) == list(range(len(subjects)))  # test sets partition the samples
    for tr, te in folds:
        assert not set(subjects[tr]) & set(subjects[te])
        assert len(tr) + len(te) == len(subjects)
    with pytest.raises(DataError, match="2 <= k <= 13"):
        subject_folds(subjects, 14)


def test_probe_separable_vs_random() -> None:
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 12)
    x = rng.normal(size=(36, 10))
    x[np.arange(36), y] += 4.0  # class c shifts feature c
    subj = np.arange(36)
    assert linear_probe_cv(x, y, subj, folds=4)["balanced_accuracy"] > 0.8
    noise = linear_probe_cv(rng.normal(size=(36, 10)), y, subj, folds=4, repeats=3)["balanced_accuracy"]
    assert noise < 0.6
    with pytest.raises(DataError, match="do not match"):
        linear_probe_cv(x, y[:-1], subj)


def test_probe_split_by_subject_sees_no_test_subject() -> None:
    """Windows of a subject share an idiosyncratic feature; a window-level split would exploit it, a
    subject-level split cannot (labels are random per subject)."""
    rng = np.random.default_rng(1)
    n_subj, per = 20, 4
    subj = np.repeat(np.arange(n_subj), per)
    label_of = rng.integers(0, 2, n_subj)
    finger = rng.normal(size=(n_subj, 30)) * 3
    x = finger[subj] + rng.normal(size=(n_subj * per, 30)) * 0.1
    acc = linear_probe_cv(x, label_of[subj], subj, folds=5, repeats=2)["balanced_accuracy"]
    assert acc < 0.75


def test_balanced_accuracy_and_classes() -> None:
    y = np.array([0, 0, 0, 1])
    assert balanced_accuracy(y, np.zeros(4, dtype=int)) == 0.5
    c = quantile_classes(np.arange(30.0), 3)
    assert np.bincount(c).tolist() == [10, 10, 10]


def test_identification() -> None:
    rng = np.random.default_rng(2)
    a = rng.normal(size=(7, 20))
    assert identification_accuracy(a, a + 0.01 * rng.normal(size=a.shape)) == 1.0
    accs = [identification_accuracy(rng.normal(size=(7, 20)), rng.normal(size=(7, 20))) for _ in range(30)]
    assert abs(np.mean(accs) - 1 / 7) < 0.1
    with pytest.raises(DataError, match="same"):
        identification_accuracy(a, a[:3])
