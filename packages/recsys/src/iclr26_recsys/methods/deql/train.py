"""``run(cfg, run_dir)`` of ``iclr26-recsys deql``: tune EASE, EDLAE and DEQL on validation users, test them.

Guo et al. (ICLR 2026) claim that DEQL's b > 0 solutions beat the b = 0 EDLAE baseline (and EASE) under
strong generalisation (Liang et al. 2018). Per user split (:mod:`iclr26_recsys.data.split`) the three
families are tuned on the validation users and tested on the test users (:mod:`.model`); test metrics are
then averaged and paired over the splits. Claim 2 minimises the DEQL objective by gradient descent on the
most popular ``gd_items`` items with the tuned DEQL hyper-parameters of split 0 and compares with the
closed form (the authors' rank-1 algorithm).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import pandas as pd

from iclr26_recsys.data import (
    binarize,
    filter_counts,
    load_interactions,
    load_ml100k,
    strong_generalization_split,
    user_kfold_split,
)
from iclr26_recsys.data.loaders import column
from iclr26_recsys.data.split import StrongSplit
from iclr26_recsys.methods.deql.config import DEQLConfig
from iclr26_recsys.methods.deql.model import FAMILIES, METRICS, gd_check, settings, sweep_split
from iclr26_shared.plotting import plot_bars, plot_curves
from iclr26_shared.runs import RunDir

__all__ = ["SEED_STRIDE", "dry_run", "load_data", "make_split", "run", "split_seed"]


def load_data(cfg: DEQLConfig) -> pd.DataFrame:
    """Read, binarise (``rating >= min_rating``) and filter the interactions named by the config."""
    df = load_ml100k() if cfg.dataset == "ml-100k" else load_interactions(cfg.data_path, cfg.dataset)
    df = binarize(df, cfg.min_rating if cfg.min_rating > 0 else None)
    return filter_counts(df, cfg.min_user_count, cfg.min_item_count)


#: Run seed ``r`` shifts the split seed by ``SEED_STRIDE·r`` (seed 0 keeps ``split_seed``; random draws of
#: different run seeds do not overlap while ``n_splits < SEED_STRIDE``).
SEED_STRIDE = 1000


def split_seed(cfg: DEQLConfig, run_seed: int = 0) -> int:
    """The user-permutation seed of run seed ``run_seed`` (``--seeds N`` replicates over user splits)."""
    return cfg.split_seed + SEED_STRIDE * run_seed


def make_split(df: pd.DataFrame, cfg: DEQLConfig, s: int, run_seed: int = 0) -> StrongSplit:
    """Split number ``s`` of the config's protocol for run seed ``run_seed``: user fold ``s`` of the
    permutation seeded ``split_seed(cfg, run_seed)``, or the random draw seeded ``split_seed(cfg, run_seed) + s``."""
    seed = split_seed(cfg, run_seed)
    if cfg.split_mode == "kfold":
        return user_kfold_split(df, cfg.n_splits, s, test_prop=cfg.test_prop, seed=seed)
    return strong_generalization_split(df, cfg.n_heldout_users, test_prop=cfg.test_prop, seed=seed + s)


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
    matched = {f: {m: float(np.mean([s["matched"]["test"][f][m] for s in splits])) for m in METRICS} for f in FAMILIES}
    out: dict[str, Any] = {"test_mean": mean, "test_std": std, "matched_mean": matched, "paired": paired}
    if all("chance" in s for s in splits):
        out["chance"] = {m: float(np.mean([s["chance"][m] for s in splits])) for m in METRICS}
    return out


def bar_errors(agg: dict[str, Any], n_splits: int, metric: str) -> tuple[dict[str, float] | None, str]:
    """Error bars and y-label of the test bar chart: ± the std over splits (``np.std``, ddof 0, as
    ``test_std``) drawn and named only with two or more splits; one split draws bare bars and says so."""
    if n_splits < 2:
        return None, f"test {metric} (1 split: no spread drawn)"
    errors = {f.upper(): agg["test_std"][f][metric] for f in FAMILIES}
    return errors, f"test {metric} (bars: mean; whiskers: ± std over {n_splits} splits)"


def _figures(run: RunDir, cfg: DEQLConfig, splits: list[dict[str, Any]], agg: dict[str, Any]) -> None:
    m = "recall@20"
    errors, ylabel = bar_errors(agg, len(splits), m)
    plot_bars(
        run.figure_path("test_recall20"),
        {f.upper(): agg["test_mean"][f][m] for f in FAMILIES},
        errors=errors,
        ylabel=ylabel,
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


def _save_tuned_deql(run: RunDir, cfg: DEQLConfig, split: StrongSplit, params: dict[str, Any]) -> None:
    """Fit DEQL with split 0's tuned settings on split 0's training users and save it as ``deql``
    (``iclr26_shared.load_model(run_dir)`` reads it back: ``B_`` and the settings)."""
    from iclr26_recsys.estimators import DEQL

    kw = {k: params[k] for k in ("p", "a", "b", "l2")}
    model = DEQL(**kw, zero_diag=cfg.zero_diag, dtype=cfg.dtype, device=str(run.device))
    model.fit(split.train)
    model.item_ids_ = [str(i) for i in split.items]
    extra = {
        "input": "users × items 0/1 matrix over item_ids_ (split 0's columns)",
        "trained_on": "split 0 training users",
    }
    run.save_model("deql", model, extra=extra)


def run(cfg: DEQLConfig, run: RunDir) -> dict[str, Any]:
    """Run the experiment; returns the results dict (the runner writes results.json and report.md)."""
    df = load_data(cfg)
    splits: list[dict[str, Any]] = []
    ckpt = run.load_checkpoint()
    if ckpt is not None:
        splits = json.loads(ckpt[1]["splits_json"])
    t0 = time.perf_counter()
    per_split = sum(len(rows) for rows in settings(cfg).values())
    with run.progress(cfg.n_splits * per_split, "deql settings", completed=len(splits) * per_split) as bar:
        for s in range(len(splits), cfg.n_splits):
            split = make_split(df, cfg, s, run.seed)
            t_split = time.perf_counter()
            res = sweep_split(split, cfg, run.device, on_setting=bar.advance)
            res["split"], res["seconds"] = s, time.perf_counter() - t_split
            splits.append(res)
            run.log(s, **{f"{f}/test_{m}": res["best"][f]["test"][m] for f in FAMILIES for m in METRICS})
            run.save_checkpoint(s + 1, {"splits_json": json.dumps(splits)})
            bar.advance(
                0,
                split=f"{s + 1}/{cfg.n_splits}",
                **{f"{f}_r20": res["best"][f]["test"]["recall@20"] for f in FAMILIES},
            )
    sweep_seconds = time.perf_counter() - t0
    split0 = make_split(df, cfg, 0, run.seed)
    gd = gd_check(split0, splits[0]["best"]["deql"]["params"], cfg, run.device)
    agg = _aggregate(splits)
    _figures(run, cfg, splits, agg)
    _save_tuned_deql(run, cfg, split0, splits[0]["best"]["deql"]["params"])
    return {
        "dataset": {
            "name": cfg.dataset,
            "interactions": int(len(df)),
            "users": int(column(df, "user").nunique()),
            "items": int(column(df, "item").nunique()),
        },
        "select_metric": cfg.select_metric,
        "split_mode": cfg.split_mode,
        "split_seed": split_seed(cfg, run.seed),
        "splits": splits,
        **agg,
        "gd_check": gd,
        "sweep_seconds": sweep_seconds,
    }


def dry_run(cfg: DEQLConfig, device: Any) -> dict[str, Any]:
    """``--dry-run``: the preset's data and one DEQL closed-form fit at its real size (every item), then
    its DEQL objective on 2 training users (``train_loss``: the objective with its λ‖B‖² term, halved) and
    an evaluation on 2 test users.

    DEQL has no optimizer: the "training step" is the closed form (the first grid setting with
    ``--sweep``); ``parameters`` is the ``n × n`` item-item matrix ``B``'s entry count.
    """
    import torch

    from iclr26_recsys.estimators import DEQL
    from iclr26_recsys.metrics import evaluate
    from iclr26_recsys.ops.objective import deql_objective

    split = make_split(load_data(cfg), cfg, 0)
    grid = settings(cfg)["deql"][0]
    kw = {"zero_diag": cfg.zero_diag, "dtype": cfg.dtype, "device": str(device)}
    model = DEQL(grid["p"], grid["a"], b=grid["b"], l2=grid["l2"], **kw).fit(split.train)
    R = torch.from_numpy(split.train[:2].toarray()).to(torch.float64)
    W = torch.from_numpy(model.B_).to(torch.float64)
    loss = float(deql_objective(R, W, grid["p"], grid["a"], grid["b"], grid["l2"])) / 2
    val = evaluate(model.predict(split.test_fold_in[:2]), split.test_fold_in[:2], split.test_holdout[:2])
    return {
        "parameters": int(model.B_.size),
        "train_loss": loss,
        "items": split.n_items,
        **{f"eval_{m}": v for m, v in val.items()},
    }
