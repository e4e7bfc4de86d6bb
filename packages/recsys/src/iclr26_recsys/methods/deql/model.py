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

import time
from typing import Any

import numpy as np
import torch

from iclr26_recsys.data.split import StrongSplit
from iclr26_recsys.estimators import gram_matrix
from iclr26_recsys.methods.deql.config import DEQLConfig
from iclr26_recsys.metrics import evaluate, random_ranking_metrics
from iclr26_recsys.ops.closed_forms import GramFactorization, LinearForm, deql_weights_rank1
from iclr26_recsys.ops.objective import deql_objective, minimize_deql_objective

__all__ = ["FAMILIES", "METRICS", "gd_check", "settings", "sweep_split"]

FAMILIES = ("ease", "edlae", "deql")
METRICS = ("recall@20", "recall@50", "ndcg@20", "ndcg@100")
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


def sweep_split(split: StrongSplit, cfg: DEQLConfig, device: torch.device) -> dict[str, Any]:
    """Tune the three families on ``split``'s validation users; return best settings and their metrics
    (and ``chance``: a random ranking's expected test metrics)."""
    dtype = _DTYPES[cfg.dtype]
    G = gram_matrix(split.train, device=device, dtype=cfg.dtype)
    Xv, Xt = _dense(split.val_fold_in, device, dtype), _dense(split.test_fold_in, device, dtype)
    grid = settings(cfg)
    by_p: dict[float, list[tuple[str, dict[str, float]]]] = {}
    for family, rows in grid.items():
        for s in rows:
            by_p.setdefault(s["p"], []).append((family, s))
    best: dict[str, dict[str, Any]] = {}
    b_curve: dict[str, float] = {}
    n_settings = 0
    for p in sorted(by_p):
        fac = GramFactorization(G, p)
        XvQ, XtQ = fac.project(Xv), None
        for family, s in by_p[p]:
            form = _form(fac, family, s, cfg.zero_diag)
            val = evaluate(fac.scores(Xv, XvQ, form).cpu().numpy(), split.val_fold_in, split.val_holdout)
            n_settings += 1
            score = val[cfg.select_metric]
            if family == "deql":
                key = f"{s['b']:g}"
                b_curve[key] = max(b_curve.get(key, -np.inf), score)
            if family not in best or score > best[family]["val"][cfg.select_metric]:
                XtQ = fac.project(Xt) if XtQ is None else XtQ
                test = evaluate(fac.scores(Xt, XtQ, form).cpu().numpy(), split.test_fold_in, split.test_holdout)
                best[family] = {"params": dict(s), "val": val, "test": test}
        del fac
    if cfg.zero_diag:
        best["deql"]["params"]["zero_diag"] = True
    chance = random_ranking_metrics(split.test_fold_in, split.test_holdout)
    return {"best": best, "deql_b_curve": b_curve, "n_settings": n_settings, "chance": chance, **split.summary()}


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
