"""Validation of user×item interaction matrices (the estimators' and metrics' input checks)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from iclr26_shared.errors import DataError

__all__ = ["InteractionError", "as_interaction_matrix", "check_k", "shape_of"]


class InteractionError(DataError, ValueError):
    """An interaction matrix (or a file holding one) is malformed; the message names what and where."""


def shape_of(M: Any) -> tuple[int, int]:
    """``(rows, columns)`` of a 2-D array or scipy sparse matrix (scipy annotates ``.shape`` as None)."""
    rows, cols = np.shape(M)
    return int(rows), int(cols)


def as_interaction_matrix(X: Any, *, name: str = "X", dtype: type = np.float64) -> sp.csr_matrix:
    """Return ``X`` (scipy sparse, NumPy array or torch tensor, ``[users, items]``) as a CSR matrix.

    Raises :class:`InteractionError` when ``X`` is not 2-D, has no rows or no columns, or holds NaN,
    infinite or negative values (interactions are counts, ratings or 0/1).
    """
    if (sp.issparse(X) or isinstance(X, np.ndarray)) and np.issubdtype(X.dtype, np.complexfloating):
        raise InteractionError(f"{name}: Complex data not supported; interactions are real numbers >= 0")
    if sp.issparse(X):
        M = sp.csr_matrix(X, dtype=dtype)
        if M.indices.dtype != M.indptr.dtype:  # mixed index widths break scipy's products: widen both
            M.indices, M.indptr = M.indices.astype(np.int64), M.indptr.astype(np.int64)
    else:
        if type(X).__module__.startswith("torch"):
            X = X.detach().cpu().numpy()  # pyright: ignore[reportAttributeAccessIssue]  # a torch tensor
        try:
            arr = np.asarray(X, dtype=dtype)
        except (TypeError, ValueError) as err:
            raise InteractionError(f"{name}: cannot be read as a numeric user×item matrix ({err})") from None
        if arr.ndim != 2:
            raise InteractionError(
                f"{name}: expected a 2-D user×item matrix, got {arr.ndim} dimension(s) "
                "(Reshape your data: one user's row is x.reshape(1, -1))"
            )
        M = sp.csr_matrix(arr)
    if 0 in shape_of(M):
        rows, cols = shape_of(M)
        what = f"0 feature(s) (shape=({rows}, 0)) while a minimum of 1 is required" if cols == 0 else "0 users"
        raise InteractionError(f"{name}: the user×item matrix is empty, {what}; it needs users and items")
    data = M.data
    if data.size:
        bad = ~np.isfinite(data)
        if bad.any():
            row = int(np.searchsorted(M.indptr, np.flatnonzero(bad)[0], side="right") - 1)
            raise InteractionError(f"{name}: holds NaN or infinite values (first in user row {row})")
        if (data < 0).any():
            row = int(np.searchsorted(M.indptr, np.flatnonzero(data < 0)[0], side="right") - 1)
            raise InteractionError(f"{name}: Negative values in data (first in user row {row}); interactions are >= 0")
    M.eliminate_zeros()
    return M


def check_k(k: int, n_items: int, *, name: str = "k") -> None:
    """Raise :class:`InteractionError` unless ``1 <= k <= n_items``."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InteractionError(f"{name} = {k!r}: must be a positive integer")
    if k > n_items:
        raise InteractionError(f"{name} = {k} is larger than the catalogue ({n_items} items)")
