"""``run(cfg, run_dir)`` of ``iclr26-recsys deql``: tune EASE, EDLAE and DEQL on validation users, test them.

Per user split (strong generalisation, :mod:`iclr26_recsys.data.split`):

1. ``G = XᵀX`` of the training users; for every dropout ``p`` in ``{0} ∪ p_grid`` one eigendecomposition
   ``G + p/(1−p)·diagMat(g) = Q diag(e) Qᵀ`` (:class:`~iclr26_recsys.ops.GramFactorization`) serves
   EASE (``p = 0``), EDLAE and every DEQL ``(a, b, λ)`` with that ``p``: scores of the fold-in users are
   ``X·diagMat(γ) + (XQ) diag(1/(e+μ)) Qᵀ diagMat(δ)``, with no ``n³`` work per setting.
2. Each family keeps the setting with the best validation ``select_metric``; its test metrics are
   computed on the test users.

Claim 2 minimises the DEQL objective by gradient descent on the most popular ``gd_items`` items with the
tuned DEQL hyper-parameters of split 0 and compares with the closed form (the authors' rank-1 algorithm).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import pandas as pd
import torch

from iclr26_recsys.data import (
    binarize,
    filter_counts,
    load_interactions,
    load_ml100k,
    strong_generalization_split,
    user_kfold_split,
)
from iclr26_recsys.data.split import StrongSplit
from iclr26_recsys.estimators import gram_matrix
from iclr26_recsys.methods.deql.config import DEQLConfig
from iclr26_recsys.metrics import evaluate
from iclr26_recsys.ops.closed_forms import GramFactorization, LinearForm, deql_weights_rank1
from iclr26_recsys.ops.objective import deql_objective, minimize_deql_objective
from iclr26_shared.plotting import plot_bars, plot_curves
from iclr26_shared.runs import RunDir

__all__ = ["FAMILIES", "METRICS", "load_data", "make_split", "run", "sweep_split"]

FAMILIES = ("ease", "edlae", "deql")
METRICS = ("recall@20", "recall@50", "ndcg@20", "ndcg@100")
_DTYPES = {"float64": torch.float64, "float32": torch.float32}


def load_data(cfg: DEQLConfig) -> pd.DataFrame:
    """Read, binarise (``rating >= min_rating``) and filter the interactions named by the config."""
    df = load_ml100k() if cfg.dataset == "ml-100k" else load_interactions(cfg.data_path, cfg.dataset)
    df = binarize(df, cfg.min_rating if cfg.min_rating > 0 else None)
    return filter_counts(df, cfg.min_user_count, cfg.min_item_count)


def make_split(df: pd.DataFrame, cfg: DEQLConfig, s: int) -> StrongSplit:
    """Split number ``s`` of the config's protocol (user fold ``s`` or random draw ``split_seed + s``)."""
    if cfg.split_mode == "kfold":
        return user_kfold_split(df, cfg.n_splits, s, test_prop=cfg.test_prop, seed=cfg.split_seed)
    return strong_generalization_split(df, cfg.n_heldout_users, test_prop=cfg.test_prop, seed=cfg.split_seed + s)


def _dense(X: Any, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    return torch.from_numpy(X.toarray()).to(device=device, dtype=dtype)


def _settings(cfg: DEQLConfig) -> dict[str, list[dict[str, float]]]:
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
    """Tune the three families on ``split``'s validation users; return best settings and their metrics."""
    dtype = _DTYPES[cfg.dtype]
    G = gram_matrix(split.train, device=device, dtype=cfg.dtype)
    Xv, Xt = _dense(split.val_fold_in, device, dtype), _dense(split.test_fold_in, device, dtype)
    settings = _settings(cfg)
    by_p: dict[float, list[tuple[str, dict[str, float]]]] = {}
    for family, rows in settings.items():
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
    return {"best": best, "deql_b_curve": b_curve, "n_settings": n_settings, **split.summary()}


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


def _aggregate(splits: list[dict[str, Any]]) -> dict[str, Any]:
    mean = {f: {m: float(np.mean([s["best"][f]["test"][m] for s in splits])) for m in METRICS} for f in FAMILIES}
    std = {f: {m: float(np.std([s["best"][f]["test"][m] for s in splits])) for m in METRICS} for f in FAMILIES}
    paired: dict[str, dict[str, dict[str, float]]] = {}
    for other in ("edlae", "ease"):
        paired[f"deql-{other}"] = {}
        for m in METRICS:
            d = np.array([s["best"]["deql"]["test"][m] - s["best"][other]["test"][m] for s in splits])
            paired[f"deql-{other}"][m] = {
                "mean": float(d.mean()),
                "std": float(d.std()),
                "wins": int((d > 0).sum()),
                "ties": int((d == 0).sum()),
                "splits": len(d),
            }
    return {"test_mean": mean, "test_std": std, "paired": paired}


def _figures(run: RunDir, cfg: DEQLConfig, splits: list[dict[str, Any]], agg: dict[str, Any]) -> None:
    m = "recall@20"
    plot_bars(
        run.figure_path("test_recall20"),
        {f.upper(): agg["test_mean"][f][m] for f in FAMILIES},
        errors={f.upper(): agg["test_std"][f][m] for f in FAMILIES},
        ylabel=f"test {m} (mean ± std over {len(splits)} splits)",
        title=f"{cfg.dataset}: tuned on validation users",
    )
    if cfg.sweep:
        bs = sorted({float(k) for s in splits for k in s["deql_b_curve"]})
        sel = cfg.select_metric
        curve = [float(np.mean([s["deql_b_curve"][f"{b:g}"] for s in splits])) for b in bs]
        curves = {"DEQL (best p, a, λ per b)": (bs, curve)}
        for f in ("edlae", "ease"):
            v = float(np.mean([s["best"][f]["val"][sel] for s in splits]))
            curves[f"{f.upper()} (tuned)"] = (bs, [v] * len(bs))
        plot_curves(run.figure_path("b_sensitivity"), curves, xlabel="b (a = 1)", ylabel=f"validation {sel}")


def run(cfg: DEQLConfig, run: RunDir) -> dict[str, Any]:
    """Run the experiment; returns the results dict (the runner writes results.json and report.md)."""
    df = load_data(cfg)
    splits: list[dict[str, Any]] = []
    ckpt = run.load_checkpoint()
    if ckpt is not None:
        splits = json.loads(ckpt[1]["splits_json"])
    t0 = time.perf_counter()
    with run.progress(cfg.n_splits, "deql splits", completed=len(splits)) as bar:
        for s in range(len(splits), cfg.n_splits):
            split = make_split(df, cfg, s)
            t_split = time.perf_counter()
            res = sweep_split(split, cfg, run.device)
            res["split"], res["seconds"] = s, time.perf_counter() - t_split
            splits.append(res)
            run.log(s, **{f"{f}/test_{m}": res["best"][f]["test"][m] for f in FAMILIES for m in METRICS})
            run.save_checkpoint(s + 1, {"splits_json": json.dumps(splits)})
            bar.advance(**{f"{f}_r20": res["best"][f]["test"]["recall@20"] for f in FAMILIES})
    sweep_seconds = time.perf_counter() - t0
    split0 = make_split(df, cfg, 0)
    gd = gd_check(split0, splits[0]["best"]["deql"]["params"], cfg, run.device)
    agg = _aggregate(splits)
    _figures(run, cfg, splits, agg)
    return {
        "dataset": {
            "name": cfg.dataset,
            "interactions": int(len(df)),
            "users": int(df["user"].nunique()),
            "items": int(df["item"].nunique()),
        },
        "select_metric": cfg.select_metric,
        "split_mode": cfg.split_mode,
        "splits": splits,
        **agg,
        "gd_check": gd,
        "sweep_seconds": sweep_seconds,
    }
