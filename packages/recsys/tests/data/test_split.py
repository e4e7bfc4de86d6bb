"""The strong-generalisation split: disjoint users, 80/20 fold-in, train-item columns, seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iclr26_recsys.data import InteractionError, strong_generalization_split
from iclr26_recsys.data.validation import shape_of


@pytest.fixture(scope="module")
def interactions() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(f"u{u}", f"i{i}") for u in range(60) for i in rng.choice(40, size=rng.integers(3, 15), replace=False)]
    return pd.DataFrame(rows, columns=["user", "item"])


def test_split_structure(interactions):
    s = strong_generalization_split(interactions, 10, seed=1)
    n = s.n_items
    assert s.train.shape == (40, n) and shape_of(s.val_fold_in)[1] == n and shape_of(s.test_holdout)[1] == n
    assert shape_of(s.val_fold_in)[0] <= 10 and shape_of(s.test_fold_in)[0] <= 10
    # fold-in and held-out items are disjoint and held-out is int(0.2·|items|) per user
    for fold, hold in ((s.val_fold_in, s.val_holdout), (s.test_fold_in, s.test_holdout)):
        assert fold.multiply(hold).nnz == 0
        total = np.asarray((fold + hold).sum(1)).ravel()
        np.testing.assert_array_equal(np.asarray(hold.sum(1)).ravel(), (0.2 * total).astype(int))
        assert (total >= 5).all()
    # columns are exactly the items seen by training users
    assert (np.asarray(s.train.sum(0)).ravel() > 0).all()


def test_split_is_seeded(interactions):
    a = strong_generalization_split(interactions, 10, seed=3)
    b = strong_generalization_split(interactions, 10, seed=3)
    c = strong_generalization_split(interactions, 10, seed=4)
    assert np.array_equal(a.val_holdout.toarray(), b.val_holdout.toarray())
    assert a.train.shape != c.train.shape or not np.array_equal(a.train.toarray(), c.train.toarray())


def test_split_errors(interactions):
    with pytest.raises(InteractionError, match="n_heldout_users = 30"):
        strong_generalization_split(interactions, 30)
    with pytest.raises(InteractionError, match="test_prop"):
        strong_generalization_split(interactions, 5, test_prop=1.0)
    with pytest.raises(InteractionError, match="'item' column"):
        strong_generalization_split(interactions.rename(columns={"item": "movie"}), 5)


def test_user_kfold_covers_every_user_once(interactions):
    from iclr26_recsys.data import user_kfold_split

    n_folds = 4
    tested = []
    for f in range(n_folds):
        s = user_kfold_split(interactions, n_folds, f, seed=2)
        assert shape_of(s.train)[0] == 60 - 2 * 15
        assert shape_of(s.test_fold_in)[0] <= 15 and shape_of(s.val_fold_in)[0] <= 15
        tested.append(s)
    # the test users of fold f are the validation users of fold f - 1
    for f in range(n_folds):
        a, b = tested[f].val_holdout, tested[(f + 1) % n_folds].test_holdout
        assert a.shape == b.shape
    with pytest.raises(InteractionError, match="n_folds = 2"):
        user_kfold_split(interactions, 2, 0)
    with pytest.raises(InteractionError, match="fold = 4"):
        user_kfold_split(interactions, 4, 4)
