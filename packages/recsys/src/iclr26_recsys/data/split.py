"""The strong-generalisation protocol of Liang et al. (2018), used by the EASE, EDLAE and DEQL papers.

Users are shuffled and split into training users and two disjoint sets of held-out users (validation
and test). Models are fit on the training users' full rows. Validation/test users keep only items seen
in training; each of them with at least ``min_fold_items`` items has ``test_prop`` of its items (rounded
down, chosen at random) held out and the rest folded in (the model's input); the others fold in all their
items and are not evaluated. Metrics rank all items with the folded-in ones masked.

:func:`strong_generalization_split` draws the held-out users at random (Liang et al.);
:func:`user_kfold_split` rotates disjoint user folds so that every user is tested once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from iclr26_recsys.data.loaders import column
from iclr26_recsys.data.validation import InteractionError, shape_of

__all__ = ["StrongSplit", "strong_generalization_split", "user_kfold_split"]


@dataclass(frozen=True)
class StrongSplit:
    """One strong-generalisation split; every matrix is CSR float64 over the same ``n`` items.

    Attributes:
        train: ``[n_train_users, n]`` full rows of the training users.
        val_fold_in: ``[n_val, n]`` folded-in items of the evaluated validation users.
        val_holdout: ``[n_val, n]`` their held-out items.
        test_fold_in: ``[n_test, n]``.
        test_holdout: ``[n_test, n]``.
        items: ``[n]`` the original item ids of the columns.
        seed: The seed of the user shuffle and the 80/20 item draws.
    """

    train: sp.csr_matrix
    val_fold_in: sp.csr_matrix
    val_holdout: sp.csr_matrix
    test_fold_in: sp.csr_matrix
    test_holdout: sp.csr_matrix
    items: np.ndarray
    seed: int

    @property
    def n_items(self) -> int:
        """``n``."""
        return shape_of(self.train)[1]

    def summary(self) -> dict[str, int]:
        """Counts for reports."""
        return {
            "n_items": self.n_items,
            "n_train_users": shape_of(self.train)[0],
            "n_val_users": shape_of(self.val_fold_in)[0],
            "n_test_users": shape_of(self.test_fold_in)[0],
            "n_train_interactions": int(self.train.nnz),
        }


def _matrix(df: pd.DataFrame, users: np.ndarray, item_index: pd.Index) -> sp.csr_matrix:
    rows = pd.Index(users).get_indexer(column(df, "user"))
    cols = item_index.get_indexer(column(df, "item"))
    return sp.csr_matrix((np.ones(len(df)), (rows, cols)), shape=(len(users), len(item_index)))


def _fold(
    df: pd.DataFrame,
    users: np.ndarray,
    item_index: pd.Index,
    test_prop: float,
    min_items: int,
    rng: np.random.Generator,
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    df = df.loc[column(df, "item").isin(item_index)]
    groups = dict(tuple(df.groupby("user", sort=False)))
    fold_rows, hold_rows, kept = [], [], []
    for u in users:
        g = groups.get(u)
        if g is None or len(g) < min_items:
            continue
        n_hold = int(test_prop * len(g))
        if n_hold == 0:
            continue
        mask = np.zeros(len(g), dtype=bool)
        mask[rng.choice(len(g), size=n_hold, replace=False)] = True
        hold_rows.append(g[mask])
        fold_rows.append(g[~mask])
        kept.append(u)
    if not kept:
        raise InteractionError("no held-out user has enough items to be evaluated; lower min_fold_items")
    kept_arr = np.asarray(kept, dtype=object)
    return _matrix(pd.concat(fold_rows), kept_arr, item_index), _matrix(pd.concat(hold_rows), kept_arr, item_index)


def _check_frame(df: pd.DataFrame, test_prop: float) -> None:
    for col in ("user", "item"):
        if col not in df.columns:
            raise InteractionError(f"interactions lack the '{col}' column (have {list(df.columns)})")
    if not 0.0 < test_prop < 1.0:
        raise InteractionError(f"test_prop = {test_prop}: must lie in (0, 1)")


def _make_split(
    df: pd.DataFrame,
    tr_users: np.ndarray,
    vd_users: np.ndarray,
    te_users: np.ndarray,
    test_prop: float,
    min_fold_items: int,
    rng: np.random.Generator,
    seed: int,
) -> StrongSplit:
    train_df = df.loc[column(df, "user").isin(tr_users)]
    item_index = pd.Index(np.sort(np.asarray(column(train_df, "item").unique())))
    train = _matrix(train_df, tr_users, item_index)
    val_fold, val_hold = _fold(
        df.loc[column(df, "user").isin(vd_users)], vd_users, item_index, test_prop, min_fold_items, rng
    )
    te_fold, te_hold = _fold(
        df.loc[column(df, "user").isin(te_users)], te_users, item_index, test_prop, min_fold_items, rng
    )
    return StrongSplit(train, val_fold, val_hold, te_fold, te_hold, np.asarray(item_index), seed)


def strong_generalization_split(
    df: pd.DataFrame,
    n_heldout_users: int,
    *,
    test_prop: float = 0.2,
    min_fold_items: int = 5,
    seed: int = 98765,
) -> StrongSplit:
    """Split binarised interactions ``df`` (columns ``user``, ``item``) into a :class:`StrongSplit`.

    ``n_heldout_users`` random users go to validation and as many to test (ML-20M: 10,000 each; MSD: 50,000).
    """
    _check_frame(df, test_prop)
    users = np.asarray(column(df, "user").unique())
    if n_heldout_users < 1 or 2 * n_heldout_users >= len(users):
        raise InteractionError(
            f"n_heldout_users = {n_heldout_users}: need 1 <= 2·n_heldout_users < number of users ({len(users)})"
        )
    rng = np.random.default_rng(seed)
    users = users[rng.permutation(len(users))]
    n_train = len(users) - 2 * n_heldout_users
    tr, vd, te = users[:n_train], users[n_train:-n_heldout_users], users[-n_heldout_users:]
    return _make_split(df, tr, vd, te, test_prop, min_fold_items, rng, seed)


def user_kfold_split(
    df: pd.DataFrame,
    n_folds: int,
    fold: int,
    *,
    test_prop: float = 0.2,
    min_fold_items: int = 5,
    seed: int = 98765,
) -> StrongSplit:
    """Fold ``fold`` of ``n_folds`` user folds: test users = fold ``f``, validation users = fold ``f + 1``
    (mod ``n_folds``), training users = the rest. Over all folds every user is a test user exactly once,
    so the averaged test metrics cover every user (several user splits are needed on small data such as ML-100K,
    where one random draw of held-out users moves the metrics as much as the models differ).
    The user permutation depends on ``seed`` only; the 80/20 item draws on ``seed`` and ``fold``.
    """
    _check_frame(df, test_prop)
    users = np.asarray(column(df, "user").unique())
    if n_folds < 3 or n_folds > len(users):
        raise InteractionError(f"n_folds = {n_folds}: need 3 <= n_folds <= number of users ({len(users)})")
    if not 0 <= fold < n_folds:
        raise InteractionError(f"fold = {fold}: must lie in [0, {n_folds})")
    users = users[np.random.default_rng(seed).permutation(len(users))]
    parts = np.array_split(users, n_folds)
    te, vd = parts[fold], parts[(fold + 1) % n_folds]
    tr = np.concatenate([parts[k] for k in range(n_folds) if k not in (fold, (fold + 1) % n_folds)])
    rng = np.random.default_rng([seed, fold])
    return _make_split(df, tr, vd, te, test_prop, min_fold_items, rng, seed)
