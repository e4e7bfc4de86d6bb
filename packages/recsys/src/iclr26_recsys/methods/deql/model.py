"""The three tuned model families of ``deql`` on one user split: EASE, EDLAE (b = 0) and DEQL (b > 0).

Guo et al. (ICLR 2026) compare DEQL's b > 0 closed form with EDLAE's b = 0 one (Steck 2020) and EASE
(Steck 2019), each tuned on validation users under strong generalisation (Liang et al. 2018).

For every dropout ``p`` in ``{0} ∪ p_grid`` one eigendecomposition
``G + p/(1−p)·diagMat(g) = Q diag(e) Qᵀ`` (:class:`~iclr26_recsys.ops.GramFactorization`) serves EASE
(``p = 0``), EDLAE and every DEQL ``(a, b, λ)`` with that ``p``: scores of the fold-in users are
``X·diagMat(γ) + (XQ) diag(1/(e+μ)) Qᵀ diagMat(δ)``, with no ``n³`` work per setting. Each family keeps
the setting with the best validation ``select_metric``; its test metrics are computed on the test users.

:func:`gd_check` minimises the DEQL objective (the paper's expected quadratic loss) by gradient descent
and compares the minimiser with the closed form of the paper's Miller-theorem algorithm.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from iclr26_recsys.data.split import StrongSplit
from iclr26_recsys.estimators import gram_matrix
from iclr26_recsys.methods.deql.config import DEQLConfig
from iclr26_recsys.metrics import evaluate, per_user_metrics, random_ranking_metrics
from iclr26_recsys.ops.closed_forms import GramFactorization, LinearForm, deql_weights_rank1
from iclr26_recsys.ops.objective import deql_objective, minimize_deql_objective

__all__ = ["CLAIM_METRICS", "FAMILIES", "METRICS", "budget_weights", "gd_check", "settings", "sweep_split"]

FAMILIES = ("ease", "edlae", "deql")
METRICS = ("recall@20", "recall@50", "ndcg@20", "ndcg@100")
#: The metrics the claims compare (per-user test values are kept for these).
CLAIM_METRICS = ("recall@20", "ndcg@100")
_DTYPES = {"float64": torch.float64, "float32": torch.float32}


def _dense(X: Any, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    return torch.from_numpy(X.toarray()).to(device=device, dtype=dtype)


def settings(cfg: DEQLConfig) -> dict[str, list[dict[str, float]]]:
    """Hyper-parameter settings per family (grids with --sweep, the single values without)."""
    if not cfg.sweep:
        return {
            "ease": [{"p": 0.0, "l2": cfg.ease_l2}],
            "edlae": [{"p": cfg.p, "l2": cfg.edlae_l2}],
            "deql": [{"p": cfg.p, "a": cfg.a, "b": cfg.b, "l2": cfg.l2}],
        }
    return {
        "ease": [{"p": 0.0, "l2": l2} for l2 in cfg.ease_l2_grid],
        "edlae": [{"p": p, "l2": l2} for p in cfg.p_grid for l2 in cfg.edlae_l2_grid],
        "deql": [
            {"p": p, "a": a, "b": b, "l2": l2}
            for p in cfg.p_grid
            for a in cfg.a_grid
            for b in cfg.b_grid
            for l2 in cfg.l2_grid
        ],
    }


def _form(fac: GramFactorization, family: str, s: dict[str, float], zero_diag: bool) -> LinearForm:
    if family == "deql":
        return fac.deql_form(s["a"], s["b"], s["l2"], zero_diag=zero_diag)
    return fac.edlae_form(s["l2"])


def budget_weights(val_scores: Sequence[float], k: int) -> np.ndarray:
    """Probability that each setting is the one chosen when ``k`` of the ``N`` settings, drawn uniformly
    without replacement, are validated and the best is kept (Dodge et al., EMNLP 2019, "Show your work":
    expected performance at a tuning budget).

    Settings are ranked by validation score, ties broken by grid order (the first wins, as in
    :func:`sweep_split`); the setting of rank ``r`` (0-based) is chosen when it is drawn and no better one
    is: ``C(N−1−r, k−1) / C(N, k)``. ``k >= N`` puts all weight on the best. Returns ``[N]`` weights in
    grid order, summing to 1.
    """
    n = len(val_scores)
    if n == 0:
        raise ValueError("budget_weights: no settings")
    k = max(1, min(int(k), n))
    order = sorted(range(n), key=lambda i: -float(val_scores[i]))  # stable: grid order among ties
    total = math.comb(n, k)
    w = np.zeros(n)
    for r, i in enumerate(order):
        w[i] = math.comb(n - 1 - r, k - 1) / total
    return w


def sweep_split(
    split: StrongSplit, cfg: DEQLConfig, device: torch.device, on_setting: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Tune the three families on ``split``'s validation users; return best settings and their metrics
    (and ``chance``: a random ranking's expected test metrics).

    Every setting is scored on the validation and the test users in one product. Besides each family's
    validation-best setting (``best``, each family over its own grid, as in the paper) the split records
    the comparison at matched tuning budgets (``matched``): every family at the budget
    ``k = max(|EDLAE grid|, |EASE grid|)`` validated settings, DEQL's test metrics being their expectation
    over random ``k``-subsets of its grid (:func:`budget_weights`), with per-user test values of the claim
    metrics (``CLAIM_METRICS``) for the paired noise of the claims. ``on_setting`` is called after each
    scored setting (progress inside the split).
    """
    dtype = _DTYPES[cfg.dtype]
    G = gram_matrix(split.train, device=device, dtype=cfg.dtype)
    Xv, Xt = _dense(split.val_fold_in, device, dtype), _dense(split.test_fold_in, device, dtype)
    X = torch.cat([Xv, Xt])
    mv = Xv.shape[0]
    grid = settings(cfg)
    by_p: dict[float, list[tuple[str, int, dict[str, float]]]] = {}
    for family, rows in grid.items():
        for j, s in enumerate(rows):
            by_p.setdefault(s["p"], []).append((family, j, s))
    scored: dict[str, list[dict[str, Any]]] = {f: [{} for _ in grid[f]] for f in grid}
    for p in sorted(by_p):
        fac = GramFactorization(G, p)
        XQ = fac.project(X)
        for family, j, s in by_p[p]:
            S = fac.scores(X, XQ, _form(fac, family, s, cfg.zero_diag)).cpu().numpy()
            val = evaluate(S[:mv], split.val_fold_in, split.val_holdout)
            test = per_user_metrics(S[mv:], split.test_fold_in, split.test_holdout)
            scored[family][j] = {
                "val": val,
                "test": {m: float(v.mean()) for m, v in test.items()},
                "user": {m: test[m] for m in CLAIM_METRICS},
            }
            if on_setting is not None:
                on_setting()
        del fac, XQ
    sel = cfg.select_metric
    best: dict[str, dict[str, Any]] = {}
    for family, rows in scored.items():
        j = int(np.argmax([r["val"][sel] for r in rows]))  # the first of equal scores, in grid order
        best[family] = {"params": dict(grid[family][j]), "val": rows[j]["val"], "test": rows[j]["test"]}
    if cfg.zero_diag:
        best["deql"]["params"]["zero_diag"] = True
    budget = max(len(grid["edlae"]), len(grid["ease"]))
    matched: dict[str, Any] = {
        "budget": budget,
        "settings": {f: len(rows) for f, rows in grid.items()},
        "test": {},
        "per_user": {},
    }
    for family, rows in scored.items():
        w = budget_weights([r["val"][sel] for r in rows], budget)
        matched["test"][family] = {
            m: float(sum(wi * r["test"][m] for wi, r in zip(w, rows, strict=True))) for m in METRICS
        }
        matched["per_user"][family] = {
            m: np.sum([wi * r["user"][m] for wi, r in zip(w, rows, strict=True) if wi > 0], axis=0).tolist()
            for m in CLAIM_METRICS
        }
    b_curve: dict[str, float] = {}
    for s, r in zip(grid["deql"], scored["deql"], strict=True):
        key = f"{s['b']:g}"
        b_curve[key] = max(b_curve.get(key, -np.inf), r["val"][sel])
    chance = random_ranking_metrics(split.test_fold_in, split.test_holdout)
    n_settings = sum(len(rows) for rows in grid.values())
    return {
        "best": best,
        "matched": matched,
        "deql_b_curve": b_curve,
        "n_settings": n_settings,
        "chance": chance,
        **split.summary(),
    }


def gd_check(split: StrongSplit, params: dict[str, float], cfg: DEQLConfig, device: torch.device) -> dict[str, Any]:
    """Closed-form DEQL vs gradient descent on the DEQL objective over the ``gd_items`` most popular items."""
    counts = np.asarray(split.train.sum(0)).ravel()
    items = np.sort(np.argsort(-counts, kind="stable")[: cfg.gd_items])
    R = _dense(split.train[:, items], device, torch.float64)
    p, a, b, l2 = params["p"], params["a"], params["b"], params["l2"]
    t0 = time.perf_counter()
    W_closed = deql_weights_rank1(R.T @ R, p, a, b, l2, zero_diag=cfg.zero_diag)
    res = minimize_deql_objective(R, p, a, b, l2, zero_diag=cfg.zero_diag, method=cfg.gd_method, steps=cfg.gd_steps)
    f_closed = float(deql_objective(R, W_closed, p, a, b, l2))
    rel = float((res.W - W_closed).norm() / W_closed.norm())
    return {
        "items": int(len(items)),
        "users": int(R.shape[0]),
        "params": {"p": p, "a": a, "b": b, "l2": l2, "zero_diag": cfg.zero_diag},
        "method": cfg.gd_method,
        "steps": res.steps,
        "relative_error": rel,
        "objective_closed_form": f_closed,
        "objective_gd": res.objective,
        "objective_gap": res.objective - f_closed,
        "seconds": time.perf_counter() - t0,
        "tolerance": cfg.gd_tolerance,
        "history": res.history[:: max(1, len(res.history) // 200)],
    }
