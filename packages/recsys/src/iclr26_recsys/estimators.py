"""Scikit-learn-like estimators: :class:`EASE`, :class:`EDLAE` and :class:`DEQL`.

Each takes a user×item matrix ``X`` (scipy sparse, NumPy or torch; ``[m, n]``, values ≥ 0), computes
``G = XᵀX`` and learns the item×item matrix ``B_`` (``[n, n]`` NumPy, the paper's ``W``) so that the
predicted scores are ``X_users @ B_``. Float64 by default (``dtype="float32"`` halves memory); the
linear algebra runs on ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``).

    >>> model = DEQL(p=0.25, b=1.5, l2=100.0).fit(X_train)
    >>> model.recommend(X_users, k=20)          # [users, 20] item indices, seen items excluded
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Self

import numpy as np
import torch
from huggingface_hub import ModelHubMixin

from iclr26_recsys.data.validation import InteractionError, as_interaction_matrix, check_k, shape_of
from iclr26_recsys.metrics import mask_seen, top_k
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

__all__ = ["DEQL", "EASE", "EDLAE", "deql_forms", "deql_path", "gram_matrix"]

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


class _LinearAutoencoder(ModelHubMixin):
    """Shared ``fit``/``predict``/``recommend`` of item-item linear autoencoders, and saving/loading.

    ``save_pretrained(dir)`` (:class:`huggingface_hub.ModelHubMixin`) writes ``config.json`` (the
    ``__init__`` arguments), ``model.safetensors`` (``B_``, exact) and ``fitted.json`` (``n_items_`` and,
    when set, ``item_ids_``: the original id of each column); ``from_pretrained(dir)`` reads a *local*
    folder back (offline; a hub id is refused), ``from_pretrained(dir, device="cpu")`` overrides a setting.
    """

    B_: np.ndarray
    n_items_: int
    #: Optional original item ids of the columns (set by the CLI's saved model; saved and loaded with it).
    item_ids_: list[str] | None = None

    def _save_pretrained(self, save_directory: Path) -> None:
        from safetensors.numpy import save_file

        self._check_fitted()
        save_file({"B": np.ascontiguousarray(self.B_)}, str(Path(save_directory) / WEIGHTS_FILE))
        fitted = {"n_items": self.n_items_, "item_ids": self.item_ids_}
        (Path(save_directory) / FITTED_FILE).write_text(json.dumps(fitted) + "\n")

    @classmethod
    def _from_pretrained(cls, *, model_id: str, **kwargs: Any) -> Self:
        from safetensors.numpy import load_file

        folder = Path(model_id)
        if not (folder / WEIGHTS_FILE).is_file():
            raise FileNotFoundError(f"{folder}: no {WEIGHTS_FILE} (expected a folder written by save_pretrained)")
        hub = ("revision", "cache_dir", "force_download", "local_files_only", "token", "proxies", "resume_download")
        init = {k: v for k, v in kwargs.items() if k not in hub}
        model = cls(**init)
        model.B_ = load_file(str(folder / WEIGHTS_FILE))["B"]
        fitted = json.loads((folder / FITTED_FILE).read_text())
        model.n_items_ = int(fitted["n_items"])
        model.item_ids_ = fitted.get("item_ids")
        return model

    def __init__(self, *, dtype: DType = "float64", device: str = "cpu") -> None:
        _resolve(device, dtype)
        self.dtype: DType = dtype
        self.device = device

    # subclasses: the closed form on G (a [n, n] tensor on the chosen device)
    def _solve(self, G: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _needs_all_items(self) -> bool:
        """True when an item without interactions makes the system singular."""
        return float(getattr(self, "l2", 0.0)) == 0.0

    def fit(self, X: Any, y: None = None) -> Self:
        """Learn ``B_`` from the user×item matrix ``X`` (``[m, n]``); returns ``self``."""
        G = gram_matrix(X, device=self.device, dtype=self.dtype)
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
        self.n_items_ = int(G.shape[0])
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "B_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit(X) first")

    def predict(self, X_users: Any) -> np.ndarray:
        """Scores ``X_users @ B_``: ``[m, n]`` → dense ``[m, n]``."""
        self._check_fitted()
        M = as_interaction_matrix(X_users, name="X_users", dtype=self.B_.dtype.type)
        if shape_of(M)[1] != self.n_items_:
            raise InteractionError(f"X_users has {shape_of(M)[1]} item columns, the model was fit on {self.n_items_}")
        return np.asarray(M @ self.B_)

    def recommend(self, X_users: Any, k: int, exclude_seen: bool = True) -> np.ndarray:
        """The ``k`` best items per user, best first (``[m, k]`` int64); seen items excluded by default."""
        self._check_fitted()
        check_k(k, self.n_items_)
        scores = self.predict(X_users)
        if exclude_seen:
            seen = as_interaction_matrix(X_users, name="X_users")
            scores = mask_seen(scores, seen)
        return top_k(scores, k)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def get_params(self) -> dict[str, Any]:
        """Hyper-parameters (scikit-learn convention)."""
        raise NotImplementedError


class EASE(_LinearAutoencoder):
    """EASE (Steck 2019): ``min ‖X − XB‖²_F + λ‖B‖²_F`` s.t. ``diag(B) = 0``.

    ``P = (G + λI)⁻¹``, ``B = I − P·diagMat(1 ⊘ diag P)``.

    Args:
        l2: ``λ ≥ 0`` (``λ = 0`` needs ``G`` invertible).
        dtype: ``"float64"`` or ``"float32"``.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``.
    """

    def __init__(self, l2: float, *, dtype: DType = "float64", device: str = "cpu") -> None:
        _check_param("l2", l2)
        super().__init__(dtype=dtype, device=device)
        self.l2 = float(l2)

    def _solve(self, G: torch.Tensor) -> torch.Tensor:
        return edlae_weights(G, 0.0, self.l2)

    def get_params(self) -> dict[str, Any]:
        return {"l2": self.l2}


class EDLAE(_LinearAutoencoder):
    """EDLAE (Steck 2020, full emphasis on dropped entries, i.e. DEQL with b = 0 and ``diag(B) = 0``).

    ``Λ = p/(1−p)·diagMat(diag G) + λI``, ``P = (G + Λ)⁻¹``, ``B = I − P·diagMat(1 ⊘ diag P)``.

    Args:
        p: Dropout probability in ``[0, 1)`` (``p = 0`` gives EASE).
        l2: ``λ ≥ 0``.
        dtype, device: As for :class:`EASE`.
    """

    def __init__(self, p: float, l2: float = 0.0, *, dtype: DType = "float64", device: str = "cpu") -> None:
        _check_param("p", p, high=1.0, high_open=True)
        _check_param("l2", l2)
        super().__init__(dtype=dtype, device=device)
        self.p = float(p)
        self.l2 = float(l2)

    def _solve(self, G: torch.Tensor) -> torch.Tensor:
        return edlae_weights(G, self.p, self.l2)

    def get_params(self) -> dict[str, Any]:
        return {"p": self.p, "l2": self.l2}


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
        _check_param("p", p, high=1.0, high_open=True)
        _check_param("a", a)
        _check_param("b", b)
        _check_param("l2", l2)
        if solver not in ("structured", "rank1", "direct"):
            raise ValueError(f"solver = {solver!r}: choose 'structured', 'rank1' or 'direct'")
        if (1 - p) ** 2 * (p * a * a + (1 - p) * b * b) <= 0.0:
            raise ValueError(f"p={p}, a={a}, b={b} put zero weight on every entry; use b > 0 (or p > 0 and a > 0)")
        if b == 0.0 and l2 == 0.0 and not zero_diag:
            raise ValueError(
                "DEQL with b = 0, l2 = 0 and zero_diag = False is not unique; use b > 0, l2 > 0 or zero_diag"
            )
        super().__init__(dtype=dtype, device=device)
        self.p, self.a, self.b, self.l2 = float(p), float(a), float(b), float(l2)
        self.zero_diag = bool(zero_diag)
        self.solver = solver

    def _solve(self, G: torch.Tensor) -> torch.Tensor:
        fn = {"structured": deql_weights_structured, "rank1": deql_weights_rank1, "direct": naive_deql_weights}
        return fn[self.solver](G, self.p, self.a, self.b, self.l2, zero_diag=self.zero_diag)

    def get_params(self) -> dict[str, Any]:
        return {"p": self.p, "a": self.a, "b": self.b, "l2": self.l2, "zero_diag": self.zero_diag}


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
