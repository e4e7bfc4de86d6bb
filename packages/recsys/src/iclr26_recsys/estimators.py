"""Scikit-learn-like estimators: :class:`EASE`, :class:`EDLAE` and :class:`DEQL`.

Each takes a user×item matrix ``X`` (scipy sparse, NumPy or torch; ``[m, n]``, values ≥ 0), computes
``G = XᵀX`` and learns the item×item matrix ``B_`` (``[n, n]`` NumPy, the paper's ``W``) so that the
predicted scores are ``X_users @ B_``. Float64 by default (``dtype="float32"`` halves memory); the
linear algebra runs on ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``).

    >>> model = DEQL(p=0.25, b=1.5, l2=100.0).fit(X_train)
    >>> model.recommend(X_users, k=20)          # Recommendations(items [users, 20], scores, users)

They are scikit-learn estimators (:class:`sklearn.base.BaseEstimator`: ``get_params(deep)``,
``set_params``, ``sklearn.base.clone``; ``score(X_fold_in, X_holdout)`` is Recall@20, so
``GridSearchCV(DEQL(p=0.25, b=1.0), grid).fit(X_fold_in, X_holdout)`` tunes on held-out users). ``fit``
also takes a pandas DataFrame of ``user, item[, rating]`` rows, or a matrix with ``item_ids=`` /
``user_ids=``; ``recommend`` then returns those ids.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, Self

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from huggingface_hub import ModelHubMixin
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from iclr26_recsys.data.validation import InteractionError, as_interaction_matrix, check_k, shape_of
from iclr26_recsys.metrics import mask_seen, recall_at_k, top_k
from iclr26_recsys.ops.closed_forms import (
    GramFactorization,
    LinearForm,
    NotPositiveDefiniteError,
    deql_form_from_inverse_diag,
    deql_weights_rank1,
    deql_weights_structured,
    edlae_weights,
    naive_deql_weights,
    spd_inverse,
)
from iclr26_shared.errors import CheckpointError

__all__ = ["DEQL", "EASE", "EDLAE", "Recommendations", "deql_forms", "deql_path", "gram_matrix"]

DType = Literal["float64", "float32"]
Solver = Literal["structured", "rank1", "direct"]
_DTYPES = {"float64": torch.float64, "float32": torch.float32}


def _resolve(device: str | torch.device, dtype: str) -> tuple[torch.device, torch.dtype]:
    if dtype not in _DTYPES:
        raise ValueError(f"dtype = {dtype!r}: choose 'float64' or 'float32'")
    if str(device) == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device = {str(device)!r}: CUDA is not available (use 'cpu')")
    return dev, _DTYPES[dtype]


def _check_param(
    name: str, value: float, *, low: float = 0.0, high: float | None = None, high_open: bool = False
) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value) and value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        rng = f"[{low:g}, {high:g}{')' if high_open else ']'}" if high is not None else f">= {low:g}"
        raise ValueError(f"{name} = {value!r}: must be a finite number {rng}")


def gram_matrix(X: Any, *, device: str | torch.device = "cpu", dtype: DType = "float64") -> torch.Tensor:
    """``G = XᵀX`` as a dense ``[n, n]`` tensor (computed sparse in float64, then moved)."""
    M = as_interaction_matrix(X)
    if M.nnz == 0:
        m, n = shape_of(M)
        raise InteractionError(f"X: the {m}×{n} user×item matrix holds no interactions")
    dev, dt = _resolve(device, dtype)
    G = (M.T @ M).toarray()
    return torch.from_numpy(G).to(device=dev, dtype=dt)


#: File names of a saved estimator (beside huggingface_hub's ``config.json`` of the ``__init__`` arguments).
WEIGHTS_FILE = "model.safetensors"
FITTED_FILE = "fitted.json"
_HUB_KWARGS = ("revision", "cache_dir", "force_download", "local_files_only", "token", "proxies", "resume_download")


class Recommendations(NamedTuple):
    """What :meth:`recommend` returns: the ``k`` best items per user, best first, with their scores.

    ``items``: ``[m, k]`` column indices (int64), or the item ids given to ``fit`` when it had them;
    ``scores``: ``[m, k]`` the matching scores (``X_users @ B_``); ``users``: ``[m]`` the user of each row
    (the ids of a DataFrame's or an id list's users, else the row numbers 0..m−1).
    """

    items: np.ndarray
    scores: np.ndarray
    users: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """One row per recommendation: ``user, item, score, rank`` (rank 1 is the best)."""
        m, k = self.items.shape
        return pd.DataFrame(
            {
                "user": np.repeat(self.users, k),
                "item": self.items.reshape(-1),
                "score": self.scores.reshape(-1),
                "rank": np.tile(np.arange(1, k + 1), m),
            }
        )


def _frame_columns(df: pd.DataFrame, name: str) -> tuple[pd.Series, pd.Series, np.ndarray]:
    """``(user, item, value)`` of a ``user, item[, rating]`` DataFrame (value 1 without a rating column)."""
    missing = [c for c in ("user", "item") if c not in df.columns]
    if missing:
        raise InteractionError(
            f"{name}: a DataFrame needs columns 'user' and 'item' (and optionally 'rating'); "
            f"missing {missing}, got {list(map(str, df.columns))}"
        )
    if len(df) == 0:
        raise InteractionError(f"{name}: the DataFrame has no rows")
    if "rating" in df.columns:
        try:
            values = np.asarray(df["rating"], dtype=np.float64)
        except (TypeError, ValueError):
            raise InteractionError(f"{name}: column 'rating' must be numeric") from None
    else:
        values = np.ones(len(df))
    return pd.Series(df["user"]), pd.Series(df["item"]), values


def _ids(values: Any, name: str) -> np.ndarray:
    ids = np.asarray(values.tolist() if isinstance(values, np.ndarray) else list(values))
    if ids.ndim != 1:
        raise InteractionError(f"{name}: expected a 1-D sequence of ids, got {ids.ndim} dimension(s)")
    if len(pd.unique(ids)) != len(ids):
        raise InteractionError(f"{name}: ids must be unique ({len(ids) - len(pd.unique(ids))} repeated)")
    return ids


class NotFittedModelError(NotFittedError, RuntimeError):
    """``predict``/``recommend``/``score``/``save_pretrained`` before ``fit`` (scikit-learn's ``NotFittedError``)."""


class _LinearAutoencoder(BaseEstimator, ModelHubMixin):
    """Shared ``fit``/``predict``/``recommend``/``score`` of item-item linear autoencoders, and saving/loading.

    A scikit-learn estimator: ``get_params(deep=True)`` / ``set_params(**params)`` (validated) over the
    ``__init__`` arguments, so ``sklearn.base.clone`` and ``GridSearchCV`` work. ``save_pretrained(dir)``
    (:class:`huggingface_hub.ModelHubMixin`) writes ``config.json`` (the current parameters),
    ``model.safetensors`` (``B_``, exact) and ``fitted.json`` (the estimator's class, ``n_items_`` and,
    when set, ``item_ids_``); ``from_pretrained(dir)`` reads a *local* folder back (offline: anything that
    is not a folder is refused at once, as is a folder saved by another estimator class),
    ``from_pretrained(dir, device="cpu")`` overrides a setting.
    """

    B_: np.ndarray
    n_items_: int
    #: Original item ids of the columns (from ``fit``'s DataFrame or ``item_ids=``, or the CLI's saved
    #: model); saved and loaded with the model; ``recommend`` returns them.
    item_ids_: np.ndarray | list[str] | None = None
    #: Original user ids of ``fit``'s rows (with a DataFrame or ``user_ids=``); ``recommend`` then takes a
    #: list of them and scores those users' training interactions (kept in ``X_``; not saved).
    user_ids_: np.ndarray | None = None
    X_: sp.csr_matrix | None = None

    # ---- scikit-learn parameters -------------------------------------------------------------------
    def __sklearn_tags__(self) -> Any:
        """Sparse input is welcome, values are >= 0 (interactions), ``y`` is optional (only :meth:`score` reads it)."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.target_tags.required = False
        return tags

    def _validate(self) -> None:
        """Check the current parameters (called by ``__init__``, ``set_params`` and ``fit``)."""
        _resolve(self.device, self.dtype)

    def set_params(self, **params: Any) -> Self:
        """Set parameters (scikit-learn convention); bad values raise the constructor's errors."""
        old = self.get_params(deep=False)
        super().set_params(**params)
        try:
            self._validate()
        except ValueError:
            super().set_params(**old)
            raise
        return self

    # ---- saving and loading ------------------------------------------------------------------------
    def save_pretrained(self, save_directory: str | Path, **kwargs: Any) -> str | None:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Write the fitted model to a local folder (config.json holds the *current* parameters)."""
        kwargs.setdefault("config", self.get_params(deep=False))
        return super().save_pretrained(save_directory, **kwargs)

    def _save_pretrained(self, save_directory: Path) -> None:
        from safetensors.numpy import save_file

        self._check_fitted()
        save_file({"B": np.ascontiguousarray(self.B_)}, str(Path(save_directory) / WEIGHTS_FILE))
        ids = None if self.item_ids_ is None else np.asarray(self.item_ids_).tolist()
        fitted = {"estimator": type(self).__name__, "n_items": self.n_items_, "item_ids": ids}
        (Path(save_directory) / FITTED_FILE).write_text(json.dumps(fitted) + "\n")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | Path, **kwargs: Any) -> Self:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Load a model saved by ``save_pretrained`` from a *local* folder (no hub, no network)."""
        folder = Path(pretrained_model_name_or_path)
        if not folder.is_dir():
            raise CheckpointError(
                f"{cls.__name__}.from_pretrained({str(pretrained_model_name_or_path)!r}): not a local folder; "
                "only folders written by save_pretrained load (hub ids are refused, nothing is downloaded)"
            )
        if not (folder / WEIGHTS_FILE).is_file() or not (folder / FITTED_FILE).is_file():
            raise CheckpointError(
                f"{folder}: no {WEIGHTS_FILE} / {FITTED_FILE} (expected a folder written by save_pretrained)"
            )
        saved = json.loads((folder / FITTED_FILE).read_text()).get("estimator")
        if saved is None:  # saved before the class was recorded: tell it by its parameters
            config = json.loads((folder / "config.json").read_text()) if (folder / "config.json").is_file() else {}
            saved = "DEQL" if "b" in config else "EDLAE" if "p" in config else "EASE"
        if saved != cls.__name__:
            raise CheckpointError(
                f"{folder}: holds a saved {saved}, not a {cls.__name__}; load it with {saved}.from_pretrained"
            )
        return super().from_pretrained(folder, **{k: v for k, v in kwargs.items() if k not in _HUB_KWARGS})

    @classmethod
    def _from_pretrained(cls, *, model_id: str, **kwargs: Any) -> Self:
        from safetensors.numpy import load_file

        folder = Path(model_id)
        model = cls(**{k: v for k, v in kwargs.items() if k not in _HUB_KWARGS})
        model.B_ = load_file(str(folder / WEIGHTS_FILE))["B"]
        fitted = json.loads((folder / FITTED_FILE).read_text())
        model.n_items_ = int(fitted["n_items"])
        model.item_ids_ = fitted.get("item_ids")
        return model

    def __init__(self, *, dtype: DType = "float64", device: str = "cpu") -> None:
        self.dtype: DType = dtype
        self.device = device
        self._validate()

    # subclasses: the closed form on G (a [n, n] tensor on the chosen device)
    def _solve(self, G: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _needs_all_items(self) -> bool:
        """True when an item without interactions makes the system singular."""
        return float(getattr(self, "l2", 0.0)) == 0.0

    # ---- ids ---------------------------------------------------------------------------------------
    def _from_frame(self, df: pd.DataFrame) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """``fit``'s DataFrame as a matrix over its sorted unique users and items."""
        users, items, values = _frame_columns(df, "X")
        u_codes, u_ids = pd.factorize(users, sort=True)
        i_codes, i_ids = pd.factorize(items, sort=True)
        if (u_codes < 0).any() or (i_codes < 0).any():
            raise InteractionError("X: columns 'user' and 'item' hold missing values")
        M = sp.csr_matrix((values, (u_codes, i_codes)), shape=(len(u_ids), len(i_ids)))
        return M, np.asarray(u_ids), np.asarray(i_ids)

    def _user_rows(self, X_users: Any) -> tuple[Any, np.ndarray]:
        """The users to score as a ``[m, n_items_]`` matrix, and their ids (row numbers for a plain matrix)."""
        if isinstance(X_users, pd.DataFrame):
            if self.item_ids_ is None:
                raise InteractionError(
                    "X_users: a DataFrame needs item ids; fit the model on a DataFrame or with item_ids="
                )
            users, items, values = _frame_columns(X_users, "X_users")
            col = pd.Index(np.asarray(self.item_ids_)).get_indexer(pd.Index(items))
            if (col < 0).any():
                unknown = pd.unique(np.asarray(items)[col < 0])
                raise InteractionError(
                    f"X_users: {len(unknown)} item id(s) were not in fit (first: {unknown[0]!r}); drop them"
                )
            u_codes, u_ids = pd.factorize(users, sort=True)
            M = sp.csr_matrix((values, (u_codes, col)), shape=(len(u_ids), self.n_items_))
            return M, np.asarray(u_ids)
        if self.user_ids_ is not None and self.X_ is not None and isinstance(X_users, list | tuple | pd.Series):
            ids = list(X_users)
            row = pd.Index(self.user_ids_).get_indexer(pd.Index(ids))
            if (row < 0).any():
                raise InteractionError(
                    f"X_users: user id {ids[int(np.flatnonzero(row < 0)[0])]!r} was not in fit; pass that user's "
                    "interactions as a DataFrame of user, item[, rating] rows"
                )
            return self.X_[row], np.asarray(ids)
        M = as_interaction_matrix(X_users, name="X_users")
        return M, np.arange(shape_of(M)[0])

    # ---- fit, predict, recommend, score ------------------------------------------------------------
    def fit(self, X: Any, y: Any = None, *, item_ids: Any = None, user_ids: Any = None) -> Self:
        """Learn ``B_`` from the user×item matrix ``X`` (``[m, n]``); returns ``self``.

        ``X`` may be a pandas DataFrame with columns ``user``, ``item`` and optionally ``rating``
        (repeated pairs add up; without ``rating`` each row counts 1): its sorted unique items become
        the columns, ``item_ids_``, and its users ``user_ids_``. With a matrix, ``item_ids=`` (``[n]``)
        and ``user_ids=`` (``[m]``) name the columns and rows. ``y`` is ignored (scikit-learn's
        convention; ``GridSearchCV`` passes the held-out matrix there for :meth:`score`).
        """
        self._validate()
        if isinstance(X, pd.DataFrame):
            if item_ids is not None or user_ids is not None:
                raise InteractionError("item_ids/user_ids: not with a DataFrame X (its columns give the ids)")
            X, user_ids, item_ids = self._from_frame(X)
        G = gram_matrix(X, device=self.device, dtype=self.dtype)
        n = int(G.shape[0])
        if item_ids is not None:
            item_ids = _ids(item_ids, "item_ids")
            if len(item_ids) != n:
                raise InteractionError(f"item_ids: {len(item_ids)} ids for the {n} item columns of X")
        if user_ids is not None:
            user_ids = _ids(user_ids, "user_ids")
            m = shape_of(as_interaction_matrix(X))[0]
            if len(user_ids) != m:
                raise InteractionError(f"user_ids: {len(user_ids)} ids for the {m} user rows of X")
        empty = torch.nonzero(torch.diagonal(G) == 0).flatten().tolist()
        if empty and self._needs_all_items():
            shown = ", ".join(map(str, empty[:10])) + (" ..." if len(empty) > 10 else "")
            raise InteractionError(
                f"X: {len(empty)} item column(s) have no interactions ({shown}); with l2 = 0 the closed form is "
                "singular: drop these columns or use l2 > 0"
            )
        try:
            B = self._solve(G)
        except NotPositiveDefiniteError as err:
            raise InteractionError(f"X: {err}") from None
        self.B_ = B.cpu().numpy()
        self.n_items_ = self.n_features_in_ = n
        self.item_ids_ = item_ids
        self.user_ids_ = user_ids
        self.X_ = as_interaction_matrix(X) if user_ids is not None else None
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "B_"):
            raise NotFittedModelError(f"{type(self).__name__} is not fitted; call fit(X) first")

    def _check_columns(self, M: Any, name: str) -> None:
        if shape_of(M)[1] != self.n_items_:
            raise InteractionError(
                f"{name}: X has {shape_of(M)[1]} features, but {type(self).__name__} is expecting {self.n_items_} "
                "features as input (the item columns it was fit on)"
            )

    def _predict_rows(self, X_users: Any) -> np.ndarray:
        M = as_interaction_matrix(X_users, name="X_users", dtype=self.B_.dtype.type)
        self._check_columns(M, "X_users")
        return np.asarray(M @ self.B_)

    def predict(self, X_users: Any) -> np.ndarray:
        """Scores ``X_users @ B_``: ``[m, n]`` → dense ``[m, n]`` (columns in the order of ``item_ids_``).

        ``X_users`` may also be a DataFrame of ``user, item[, rating]`` rows (rows of the result: its sorted
        unique users) or, after ``fit`` with user ids, a list of those ids.
        """
        self._check_fitted()
        return self._predict_rows(self._user_rows(X_users)[0])

    def recommend(self, X_users: Any, k: int, exclude_seen: bool = True) -> Recommendations:
        """The ``k`` best items per user, best first, and their scores; seen items excluded by default.

        Returns :class:`Recommendations` ``(items, scores, users)``: ``[m, k]`` item column indices (or the
        item ids ``fit`` was given), ``[m, k]`` scores, ``[m]`` the users (ids for a DataFrame or an id
        list, else row numbers); ``.to_frame()`` gives ``user, item, score, rank`` rows.
        """
        self._check_fitted()
        check_k(k, self.n_items_)
        rows, users = self._user_rows(X_users)
        scores = self._predict_rows(rows)
        if exclude_seen:
            scores = mask_seen(scores, as_interaction_matrix(rows, name="X_users"))
        idx = top_k(scores, k)
        items = idx if self.item_ids_ is None else np.asarray(self.item_ids_)[idx]
        return Recommendations(items, np.take_along_axis(scores, idx, axis=1), users)

    def score(self, X: Any, y: Any = None, *, k: int = 20) -> float:
        """Mean Recall@k (default 20) of held-out items ``y`` given fold-in items ``X`` (both ``[m, n]``).

        Fold-in items are excluded from the ranking (Liang et al. 2018); users without held-out items
        are skipped. This is what ``GridSearchCV(model, grid).fit(X_fold_in, X_holdout)`` maximises.
        """
        self._check_fitted()
        fold_in = as_interaction_matrix(X, name="X")
        self._check_columns(fold_in, "X")
        if y is None:
            raise InteractionError("y: score needs the held-out items of the users in X ([m, n], 0/1)")
        held = as_interaction_matrix(y, name="y")
        keep = np.flatnonzero(np.asarray(held.getnnz(axis=1)) > 0)
        if keep.size == 0:
            raise InteractionError("y: no user has held-out items")
        fold_in = fold_in[keep]
        scores = mask_seen(self._predict_rows(fold_in), fold_in)
        return float(np.mean(recall_at_k(scores, held[keep], k)))

    def __repr__(self, N_CHAR_MAX: int = 700) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({params})"


class EASE(_LinearAutoencoder):
    """EASE (Steck 2019): ``min ‖X − XB‖²_F + λ‖B‖²_F`` s.t. ``diag(B) = 0``.

    ``P = (G + λI)⁻¹``, ``B = I − P·diagMat(1 ⊘ diag P)``.

    Args:
        l2: ``λ ≥ 0`` (``λ = 0`` needs ``G`` invertible).
        dtype: ``"float64"`` or ``"float32"``.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``.
    """

    def __init__(self, l2: float, *, dtype: DType = "float64", device: str = "cpu") -> None:
        self.l2 = l2
        super().__init__(dtype=dtype, device=device)

    def _validate(self) -> None:
        _check_param("l2", self.l2)
        super()._validate()

    def _solve(self, G: torch.Tensor) -> torch.Tensor:
        return edlae_weights(G, 0.0, float(self.l2))


class EDLAE(_LinearAutoencoder):
    """EDLAE (Steck 2020, full emphasis on dropped entries, i.e. DEQL with b = 0 and ``diag(B) = 0``).

    ``Λ = p/(1−p)·diagMat(diag G) + λI``, ``P = (G + Λ)⁻¹``, ``B = I − P·diagMat(1 ⊘ diag P)``.

    Args:
        p: Dropout probability in ``[0, 1)`` (``p = 0`` gives EASE).
        l2: ``λ ≥ 0``.
        dtype, device: As for :class:`EASE`.
    """

    def __init__(self, p: float, l2: float = 0.0, *, dtype: DType = "float64", device: str = "cpu") -> None:
        self.p = p
        self.l2 = l2
        super().__init__(dtype=dtype, device=device)

    def _validate(self) -> None:
        _check_param("p", self.p, high=1.0, high_open=True)
        _check_param("l2", self.l2)
        super()._validate()

    def _solve(self, G: torch.Tensor) -> torch.Tensor:
        return edlae_weights(G, float(self.p), float(self.l2))


class DEQL(_LinearAutoencoder):
    """DEQL (Guo et al., ICLR 2026): ``min E_Δ ‖A⊙(X − (Δ⊙X)B)‖²_F + λ‖B‖²_F``.

    Keep-mask ``Δ ~ Bernoulli(1−p)``, emphasis ``a`` on dropped and ``b`` on kept entries. The solution
    decouples by column, ``B_{:,i} = (H^{(i)})⁻¹V_{:,i}`` (see :mod:`iclr26_recsys.ops.closed_forms`);
    with ``b > 0`` it is unique without any diagonal constraint. The L2 variant adds ``λI`` to ``H0``.

    Args:
        p: Dropout probability in ``[0, 1)``.
        a: Emphasis on dropped entries (the paper fixes ``a = 1``; only ``b/a`` matters when ``λ = 0``).
        b: Emphasis on kept entries, keyword-only (``b = 0`` is EDLAE's setting; needs ``l2 > 0`` or
            ``zero_diag``).
        l2: ``λ ≥ 0`` added to ``H0``.
        zero_diag: Also constrain ``diag(B) = 0`` (the paper's "L2 + zero-diag" ablation).
        solver: ``"structured"`` (default; one inverse, the rank-1 updates done symbolically),
            ``"rank1"`` (the authors' algorithm: ``H0⁻¹``, two products and two Sherman–Morrison
            updates per column) or ``"direct"`` (one dense solve per column, ``O(n⁴)``, reference).
        dtype, device: As for :class:`EASE`.
    """

    def __init__(
        self,
        p: float,
        a: float = 1.0,
        *,
        b: float,
        l2: float = 0.0,
        zero_diag: bool = False,
        solver: Solver = "structured",
        dtype: DType = "float64",
        device: str = "cpu",
    ) -> None:
        self.p, self.a, self.b, self.l2 = p, a, b, l2
        self.zero_diag = zero_diag
        self.solver: Solver = solver
        super().__init__(dtype=dtype, device=device)

    def _validate(self) -> None:
        p, a, b, l2 = self.p, self.a, self.b, self.l2
        _check_param("p", p, high=1.0, high_open=True)
        _check_param("a", a)
        _check_param("b", b)
        _check_param("l2", l2)
        if self.solver not in ("structured", "rank1", "direct"):
            raise ValueError(f"solver = {self.solver!r}: choose 'structured', 'rank1' or 'direct'")
        if (1 - p) ** 2 * (p * a * a + (1 - p) * b * b) <= 0.0:
            raise ValueError(f"p={p}, a={a}, b={b} put zero weight on every entry; use b > 0 (or p > 0 and a > 0)")
        if b == 0.0 and l2 == 0.0 and not self.zero_diag:
            raise ValueError(
                "DEQL with b = 0, l2 = 0 and zero_diag = False is not unique; use b > 0, l2 > 0 or zero_diag"
            )
        super()._validate()

    def _solve(self, G: torch.Tensor) -> torch.Tensor:
        fn = {"structured": deql_weights_structured, "rank1": deql_weights_rank1, "direct": naive_deql_weights}
        return fn[self.solver](
            G, float(self.p), float(self.a), float(self.b), float(self.l2), zero_diag=bool(self.zero_diag)
        )


def _sweep_models(
    p: float, a: float, b_values: Sequence[float], l2: float, zero_diag: bool, dtype: DType, device: str
) -> list[DEQL]:
    """One unfitted DEQL per ``b``: every setting is validated, with the estimator's messages, before any work."""
    return [DEQL(p, a, b=b, l2=l2, zero_diag=zero_diag, dtype=dtype, device=device) for b in b_values]


def _sweep_gram(X: Any, l2: float, dtype: DType, device: str) -> torch.Tensor:
    """``G = XᵀX`` for a sweep; with ``l2 = 0`` an item without interactions makes every closed form singular."""
    G = gram_matrix(X, device=device, dtype=dtype)
    if l2 == 0.0 and bool((torch.diagonal(G) == 0).any()):
        raise InteractionError("X: some item columns have no interactions; with l2 = 0 the closed form is singular")
    return G


def deql_path(
    X: Any,
    p: float,
    b_values: Sequence[float],
    *,
    a: float = 1.0,
    l2: float = 0.0,
    zero_diag: bool = False,
    dtype: DType = "float64",
    device: str = "cpu",
) -> list[DEQL]:
    """Fit DEQL for every ``b`` in ``b_values`` from one factorisation of ``G + p/(1−p)·diagMat(g)``.

    With ``l2 = 0`` one Cholesky inverse serves all ``b`` and every further ``b`` costs ``O(n²)`` (``H0⁻¹``
    only rescales). With ``l2 > 0`` the shift ``λ/c(b)`` of ``G + D`` changes with ``b``; a dense ``W`` per
    ``b`` then costs one Cholesky inverse (measured faster than sharing one ``eigh`` and forming each
    ``W`` by a product); :func:`deql_forms` shares one ``eigh`` and never forms a dense ``W`` (the fast
    path for a ``b`` sweep at ``l2 > 0``, and what the CLI's sweep scores users with).
    Returns fitted estimators (``solver="structured"``), in the order of ``b_values``.
    """
    models = _sweep_models(p, a, b_values, l2, zero_diag, dtype, device)
    if not models:
        return []
    G = _sweep_gram(X, l2, dtype, device)
    P0 = None
    if l2 == 0.0:  # H0⁻¹ = P0 / c(b) with P0 = (G + D)⁻¹: one Cholesky inverse serves every b
        P0 = spd_inverse(G + torch.diag(p / (1.0 - p) * torch.diagonal(G)), what="G + D")
    for model in models:
        if P0 is not None:
            p0_diag, g = torch.diagonal(P0), torch.diagonal(G)
            form = deql_form_from_inverse_diag(p0_diag, g, p, a, model.b, 0.0, zero_diag)
            W = P0 * form.delta[None, :]
            W.diagonal().add_(form.gamma)
        else:  # the shift λ/c(b) changes with b: one Cholesky inverse per b (cheaper than eigh + a product)
            W = deql_weights_structured(G, p, a, model.b, l2, zero_diag=zero_diag)
        model.B_ = W.cpu().numpy()
        model.n_items_ = int(G.shape[0])
    return models


def deql_forms(
    X: Any,
    p: float,
    b_values: Sequence[float],
    *,
    a: float = 1.0,
    l2: float = 0.0,
    zero_diag: bool = False,
    dtype: DType = "float64",
    device: str = "cpu",
) -> tuple[GramFactorization, list[LinearForm]]:
    """DEQL for every ``b`` in ``b_values`` in factored form, from one ``eigh`` of ``G + D``.

    With ``G + D = Q diag(e) Qᵀ`` (``D = p/(1−p)·diagMat(g)``), the model for ``(a, b, λ)`` is exactly
    ``W = diagMat(γ) + Q diag(1/(e + μ_b)) Qᵀ diagMat(δ)`` with ``μ_b = λ/c(b)``: one ``O(n³)`` ``eigh``
    for the whole sweep, then ``O(n²)`` per ``b`` for ``(γ, δ, μ_b)`` (:class:`LinearForm`), with no
    dense ``[n, n]`` matrix per ``b``. This is the sweep to use at ``l2 > 0``, where a dense ``W`` per
    ``b`` (:func:`deql_path`) needs its own ``n³`` inverse: 10 values of ``b`` at ``λ = 100`` ran 5–9×
    faster than 10 fits at 1,000–2,000 items (``packages/recsys/benchmarks/deql_fit.py``, ``factored_speedup``).

    Use the returned factorisation to score users, ``fac.scores(X_u, fac.project(X_u), form)`` (``X_u``
    ``[m, n]`` torch, ``= X_u @ B_``), or to form one dense ``W = fac.weights(form)`` (``[n, n]``, equal
    to ``DEQL(p, a, b, l2).fit(X).B_`` to rounding).

    Returns:
        ``(fac, forms)``: the shared :class:`~iclr26_recsys.ops.GramFactorization` and one
        :class:`LinearForm` per ``b``, in the order of ``b_values``.
    """
    _sweep_models(p, a, b_values, l2, zero_diag, dtype, device)
    fac = GramFactorization(_sweep_gram(X, l2, dtype, device), p)
    return fac, [fac.deql_form(a, b, l2, zero_diag=zero_diag) for b in b_values]
