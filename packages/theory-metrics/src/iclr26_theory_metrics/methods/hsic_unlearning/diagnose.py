"""Why the validity check passes or fails at a scale: measurements of the split-half statistic on the models of a
saved ``hsic-unlearning`` run (issue 38).

The validity claim needs the never-unlearned original model's forget subsets to read "in training" and the
retrained model's "out of training". Whether the protocol can resolve that depends on three sizes, all measured
here on the run's own features (``[N, p]`` float64, the penultimate layer):

* **the effect**: the level of H (its exact mean over the shuffles, :func:`~iclr26_theory_metrics.ops.hsic.
  split_half_mean`) of subsets of |S| drawn from each pool (forget, the in-training reference pool, the
  out-of-training reference pool, the unseen pool): how far apart trained and unseen images sit;
* **the subset noise**: the standard deviation of that level over random subsets of one pool (the part of the
  spread that no number of shuffles removes);
* **the shuffle noise**: the spread of H over the shuffles of one subset relative to its mean (``shuffle_cv``) and
  the JSD between two independent sets of ``n_shuffles`` shuffles of the *same* subset and split
  (``jsd_floor``): what the decision rule reads when two distributions are identical. A reference gap far below
  the shuffle spread moves the JSD by less than this floor's own fluctuation.

Then the OTR of the original and the retrained model under protocol variants (the run's protocol and documented
switches), with the same keyed draws as the run (``Protocol(cfg, seed + 3)``): the as-run variant reproduces the
run's ``results.json`` exactly (tested). ``diagnose_spare`` asks the pool-size question: it trains the original
and the retrained model on ``n_train`` images of the training split and adds the unused ones to the unseen pools.

Command line: ``python -m iclr26_theory_metrics.methods.hsic_unlearning.diagnose RUN_DIR ... [--out FILE]`` and
``... --spare N_TRAIN --seed S``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26_shared.config import config_from_dict, replace_config
from iclr26_shared.errors import Iclr26Error, UsageError
from iclr26_shared.verdicts import t_interval
from iclr26_theory_metrics.methods.hsic_unlearning.config import HsicUnlearningConfig
from iclr26_theory_metrics.methods.hsic_unlearning.protocol import Protocol, otr_study
from iclr26_theory_metrics.ops.hsic import jsd, split_half_dependence, split_half_mean

__all__ = [
    "DEFAULT_VARIANTS",
    "diagnose_features",
    "diagnose_run",
    "diagnose_spare",
    "main",
    "pool_levels",
    "shuffle_noise",
]

#: Protocol variants: the run's protocol and documented switches (``HsicUnlearningConfig`` fields).
DEFAULT_VARIANTS: dict[str, dict[str, Any]] = {
    "as-run": {},
    "mann-whitney": {"decision": "mann-whitney"},
    "bins-10": {"jsd_bins": 10},
    "sigma-median": {"sigma": "median"},
    "references-4": {"reference_subsets": 4, "reference_overlap": True},
}
#: The pools of one model: forget set, in-training reference pool, out-of-training reference pool, unseen pool.
POOLS = ("forget", "it_ref", "oot_ref", "unseen")


def pool_levels(
    pools: Mapping[str, torch.Tensor], size: int, count: int, *, cfg: HsicUnlearningConfig, generator: torch.Generator
) -> dict[str, dict[str, Any]]:
    """``{pool: {"mean", "sd", "n", "values"}}``: the exact shuffle mean of H for ``count`` random subsets of
    ``size`` rows of each pool ``[N, p]`` (pools smaller than ``size`` are left out; ``values``), its mean and
    standard deviation over the subsets, and the pool's size."""
    out: dict[str, dict[str, Any]] = {}
    for name, feats in pools.items():
        if feats.shape[0] < size:
            continue
        vals = [
            split_half_mean(
                feats,
                torch.randperm(feats.shape[0], generator=generator)[:size],
                kernel=cfg.kernel,
                sigma=cfg.sigma,
                generator=generator,
            )
            for _ in range(count)
        ]
        out[name] = {
            "mean": float(np.mean(vals)),
            "sd": float(np.std(vals, ddof=1)),
            "n": float(feats.shape[0]),
            "values": [float(v) for v in vals],
        }
    return out


def shuffle_noise(
    feats: torch.Tensor, size: int, count: int, *, cfg: HsicUnlearningConfig, generator: torch.Generator
) -> dict[str, float]:
    """For ``count`` random subsets of ``size`` rows of ``feats`` (one split each): ``shuffle_cv`` = the mean over
    subsets of sd / mean of H over ``cfg.n_shuffles`` shuffles, and ``jsd_floor`` (with its sd over subsets) = the
    JSD, on ``cfg.jsd_bins`` bins over their pooled range, between two independent sets of ``cfg.n_shuffles``
    shuffles of the same subset and split: the value the decision rule reads for two identical distributions."""
    b = cfg.n_shuffles
    cvs, floors = [], []
    for _ in range(count):
        idx = torch.randperm(feats.shape[0], generator=generator)[:size]
        h = split_half_dependence(feats, idx, 2 * b, kernel=cfg.kernel, sigma=cfg.sigma, generator=generator)
        a, c = h[:b], h[b:]
        cvs.append(float(a.std() / a.mean()))
        lo, hi = float(h.min()), float(h.max())
        floors.append(jsd(a, c, torch.linspace(lo, max(hi, lo + 1e-12), cfg.jsd_bins + 1, dtype=torch.float64)))
    return {
        "shuffle_cv": float(np.mean(cvs)),
        "jsd_floor": float(np.mean(floors)),
        "jsd_floor_sd": float(np.std(floors, ddof=1)) if count > 1 else 0.0,
    }


def _paired(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    d = [x - y for x, y in zip(a, b, strict=True)]
    lo, hi = t_interval(d)
    return {"mean": float(np.mean(d)), "ci": [lo, hi]}


def diagnose_features(
    cfg: HsicUnlearningConfig,
    seed: int,
    feats: Mapping[str, Mapping[str, torch.Tensor]],
    *,
    variants: Mapping[str, Mapping[str, Any]] = DEFAULT_VARIANTS,
    count: int = 40,
) -> dict[str, Any]:
    """The measurements of the module docstring for the models ``feats = {model: {pool: [N, p]}}`` (pools of
    :data:`POOLS`; the OTR needs ``original`` and ``retrain``); ``seed`` is the run's seed (the protocol draws are
    keyed by ``seed + 3``, as in the run). Per model: ``levels`` (:func:`pool_levels`), ``noise``
    (:func:`shuffle_noise` on the forget pool), ``gap_in_subset_sd`` and ``gap_in_shuffle_sd`` (the level of the
    in-training reference pool minus the out-of-training one, in units of the subset sd and of the shuffle sd),
    ``auc_forget_unseen`` (the run's ``auc_mean_h`` statistic, P(level of a forget subset > that of an unseen
    one), on these subsets) and ``auc_placebo`` (the same between the out-of-training reference pool and the
    unseen pool, both never trained on: what a difference between two fixed pools gives on its own);
    per variant: each model's OTR with its MC interval and draws, and ``retrain_minus_original`` (paired mean and
    interval over the draws), the validity claim's gain (AUCs: the run's ``rank_auc``)."""
    from iclr26_theory_metrics.methods.hsic_unlearning.train import rank_auc

    size = cfg.subset_size
    out: dict[str, Any] = {"seed": seed, "subset_size": size, "models": {}, "variants": {}}
    for name, pools in feats.items():
        missing = [p for p in POOLS if p not in pools]
        if missing:
            raise UsageError(f"feats[{name!r}]: missing pool(s) {missing}; expected {list(POOLS)}")
        gen = torch.Generator().manual_seed(seed + 1000)
        levels = pool_levels(pools, size, count, cfg=cfg, generator=gen)
        noise = shuffle_noise(pools["forget"], size, max(count // 4, 2), cfg=cfg, generator=gen)
        it, oot = levels.get("it_ref"), levels.get("oot_ref")
        row: dict[str, Any] = {"levels": levels, "noise": noise}
        if "forget" in levels and "unseen" in levels:
            row["auc_forget_unseen"] = rank_auc(levels["forget"]["values"], levels["unseen"]["values"])
        if oot and "unseen" in levels:  # two disjoint pools of unseen images: what a pool difference alone gives
            row["auc_placebo"] = rank_auc(oot["values"], levels["unseen"]["values"])
        if it and oot:
            gap = it["mean"] - oot["mean"]
            row["gap_in_subset_sd"] = gap / max(it["sd"], 1e-300)
            row["gap_in_shuffle_sd"] = gap / max(noise["shuffle_cv"] * it["mean"], 1e-300)
        out["models"][name] = row
    if "original" in feats and "retrain" in feats:
        for vname, over in variants.items():
            vcfg = replace_config(cfg, **over)
            res = {}
            for name in ("original", "retrain"):
                f = feats[name]
                r = otr_study(Protocol(vcfg, seed + 3), f["forget"], f["it_ref"], f["oot_ref"])
                res[name] = {k: r[k] for k in ("otr", "otr_ci", "otr_draws", "mean_jsd_it", "mean_jsd_oot")}
            res["retrain_minus_original"] = _paired(res["retrain"]["otr_draws"], res["original"]["otr_draws"])
            out["variants"][vname] = res
    return out


def diagnose_run(
    run_dir: str | Path,
    *,
    variants: Mapping[str, Mapping[str, Any]] = DEFAULT_VARIANTS,
    models: Sequence[str] = ("original", "retrain"),
    count: int = 40,
) -> dict[str, Any]:
    """:func:`diagnose_features` on the saved models of a ``hsic-unlearning`` run directory: the config and seed
    from its ``config.json``, the data split rebuilt as the run built it, the models loaded offline
    (``iclr26_shared.load_model``)."""
    from iclr26_shared.io import read_json
    from iclr26_shared.models import load_model
    from iclr26_theory_metrics.methods.hsic_unlearning.train import _features, evaluation_pools, split_data

    path = Path(run_dir)
    if not (path / "config.json").is_file():
        raise UsageError(f"run_dir: {path} has no config.json (not a run directory)")
    meta = read_json(path / "config.json", what="run config")
    if meta.get("method") != "hsic-unlearning":
        raise UsageError(f"run_dir: {path} is a {meta.get('method')!r} run, expected 'hsic-unlearning'")
    cfg = config_from_dict(HsicUnlearningConfig, meta["config"])
    seed = int(meta["seed"])
    sp = split_data(cfg, seed)
    it_pool_idx, _ = evaluation_pools(Protocol(cfg, seed + 3), sp.retain_idx.numel())
    x, xt = sp.data.x_train, sp.data.x_test
    images = {
        "forget": x[sp.forget_idx],
        "it_ref": x[sp.retain_idx][it_pool_idx],
        "oot_ref": xt[sp.ref_idx],
        "unseen": xt[sp.unseen_idx],
    }
    feats = {}
    for name in models:
        model = load_model(path, name)
        feats[name] = {k: _features(model, v, cfg) for k, v in images.items()}
    return {"run_dir": str(path), **diagnose_features(cfg, seed, feats, variants=variants, count=count)}


def diagnose_spare(
    cfg: HsicUnlearningConfig,
    seed: int,
    n_train: int,
    *,
    variants: Mapping[str, Mapping[str, Any]] = DEFAULT_VARIANTS,
    count: int = 40,
) -> dict[str, Any]:
    """The pool-size question: a random ``n_train`` of ``cfg.dataset``'s training split is trained on (the forget
    set its share ``cfg.forget_ratio``), the other training-split images join the test split as unseen images
    (halved at random into the out-of-training reference pool and the unseen pool), the original and the retrained
    model are trained with ``cfg``'s settings from one initialisation, and :func:`diagnose_features` measures them
    (the in-training reference pool is the whole retain set)."""
    from iclr26_shared.images import load_image_tensors
    from iclr26_theory_metrics.methods.hsic_unlearning.model import build_classifier, train_classifier
    from iclr26_theory_metrics.methods.hsic_unlearning.train import _features

    data = load_image_tensors(cfg.dataset, seed=seed, scale="standardize")
    n_all = data.x_train.shape[0]
    if not 0 < n_train < n_all:
        raise UsageError(f"n_train: expected 1 … {n_all - 1} (the training split has {n_all} images), got {n_train}")
    gen = torch.Generator().manual_seed(seed + 1)
    perm = torch.randperm(n_all, generator=gen)
    train_idx, spare = perm[:n_train], perm[n_train:]
    k = max(1, round(cfg.forget_ratio * n_train))
    forget_idx, retain_idx = train_idx[:k], train_idx[k:]
    x, y = data.x_train, data.y_train
    pool = torch.cat([x[spare], data.x_test])
    order = torch.randperm(pool.shape[0], generator=gen)
    half = pool.shape[0] // 2
    images = {
        "forget": x[forget_idx],
        "it_ref": x[retain_idx],
        "oot_ref": pool[order[:half]],
        "unseen": pool[order[half:]],
    }
    feats, accuracy = {}, {}
    for j, (name, idx) in enumerate((("original", train_idx), ("retrain", retain_idx))):
        torch.manual_seed(seed)
        model = build_classifier(cfg, data.image_shape, data.num_classes)
        train_classifier(
            model, (x[idx], y[idx]), epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size,
            weight_decay=cfg.weight_decay, gen=torch.Generator().manual_seed(seed + 2 + j),
        )  # fmt: skip
        feats[name] = {key: _features(model, v, cfg) for key, v in images.items()}
        with torch.no_grad():
            accuracy[name] = {
                "forget": float((model(x[forget_idx]).argmax(1) == y[forget_idx]).double().mean()),
                "test": float((model(data.x_test).argmax(1) == data.y_test).double().mean()),
            }
    out = diagnose_features(cfg, seed, feats, variants=variants, count=count)
    return {"n_train": n_train, "n_forget": k, "n_unseen": int(pool.shape[0]), "accuracy": accuracy, **out}


def _summary(res: Mapping[str, Any]) -> str:
    lines = [f"seed {res['seed']}, |S| = {res['subset_size']}" + (f", {res['run_dir']}" if "run_dir" in res else "")]
    for name, m in res["models"].items():
        lv = ", ".join(f"{p} {v['mean']:.4e} (sd {v['sd'] / v['mean']:.3f})" for p, v in m["levels"].items())
        n = m["noise"]
        lines.append(f"  {name}: level of H (subset sd / mean): {lv}")
        lines.append(
            f"  {name}: shuffle sd / mean {n['shuffle_cv']:.3f}, JSD floor {n['jsd_floor']:.3f} ± "
            f"{n['jsd_floor_sd']:.3f}; IT - OOT reference level = {m.get('gap_in_subset_sd', float('nan')):.2f} "
            f"subset sd = {m.get('gap_in_shuffle_sd', float('nan')):.3f} shuffle sd; AUC forget vs unseen "
            f"{m.get('auc_forget_unseen', float('nan')):.2f}, placebo (OOT reference vs unseen pool) "
            f"{m.get('auc_placebo', float('nan')):.2f}"
        )
    for vname, v in res["variants"].items():
        o, r, d = v["original"], v["retrain"], v["retrain_minus_original"]
        lines.append(
            f"  {vname}: OTR original {o['otr']:.3f}, retrain {r['otr']:.3f}, difference {d['mean']:.3f} "
            f"[{d['ci'][0]:.3f}, {d['ci'][1]:.3f}]; JSD to IT / OOT original {o['mean_jsd_it']:.3f} / "
            f"{o['mean_jsd_oot']:.3f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (module docstring); prints a summary per run, ``--out`` writes every number as JSON."""
    ap = argparse.ArgumentParser(prog="python -m iclr26_theory_metrics.methods.hsic_unlearning.diagnose")
    ap.add_argument("run_dirs", nargs="*", help="hsic-unlearning run directories (with saved models)")
    ap.add_argument("--spare", type=int, default=0, help="instead: train on this many images, the rest unseen")
    ap.add_argument("--seed", type=int, default=0, help="seed of --spare")
    ap.add_argument("--preset", default="quick", help="config preset of --spare")
    ap.add_argument("--subset-size", type=int, default=0, help="|S| of --spare (0 = the preset's)")
    ap.add_argument("--count", type=int, default=40, help="random subsets per pool for the levels")
    ap.add_argument("--out", type=Path, default=None, help="write the numbers as JSON here")
    args = ap.parse_args(argv)
    try:
        if args.spare:
            from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS

            if args.preset not in PRESETS:
                raise UsageError(f"--preset: expected one of {sorted(PRESETS)}, got {args.preset!r}")
            cfg = PRESETS[args.preset]
            if args.subset_size:
                cfg = dataclasses.replace(cfg, subset_size=args.subset_size)
            results = [diagnose_spare(cfg, args.seed, args.spare, count=args.count)]
        elif args.run_dirs:
            results = [diagnose_run(d, count=args.count) for d in args.run_dirs]
        else:
            raise UsageError("give one or more run directories, or --spare N_TRAIN")
    except Iclr26Error as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for res in results:
        print(_summary(res))
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    torch.set_num_threads(1)
    raise SystemExit(main())
