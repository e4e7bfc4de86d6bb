"""``neural-collapse`` run: UFM theorem checks, then a grid of real training runs with NC metrics per epoch.

Each training run: the model (seeded identically for every run, so all optimizers start from the same
weights), minibatch training with cross-entropy, weight decay on every parameter, the learning rate ×0.1 at
1/3 and 2/3 of the epochs (Papyan et al.), and at epoch 0 and after every epoch one row in ``metrics.jsonl``
with all NC metrics (:class:`~iclr26_theory_metrics.recorder.NCRecorder`). A checkpoint after every finished
run holds the summaries so far, so ``--resume`` continues with the next run.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from iclr26_shared.images import ImageTensors, load_image_tensors
from iclr26_shared.runs import RunDir
from iclr26_theory_metrics.analysis import summarise
from iclr26_theory_metrics.methods.neural_collapse.config import NeuralCollapseConfig, RunSpec, expand_grid
from iclr26_theory_metrics.methods.neural_collapse.model import build_run_model, build_run_optimizer
from iclr26_theory_metrics.plotting import plot_training, plot_ufm
from iclr26_theory_metrics.recorder import NCRecorder
from iclr26_theory_metrics.ufm import (
    max_relative_error,
    sgd_alpha_theory,
    signgd_decoupled_alpha_theory,
    signgd_decoupled_limit,
    simulate_ufm,
)

__all__ = ["run", "train_one", "ufm_study"]


def ufm_study(cfg: NeuralCollapseConfig, device: torch.device, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Claim 1: run the five UFM simulations of Theorems 3.1–3.4 with the real optimizer classes and compare
    α_t = |Wᵀ1|²/K with the closed forms of :mod:`iclr26_theory_metrics.ufm`; returns ``(results, traces)``
    (traces: α_t curves for the plots)."""
    k, steps = cfg.ufm_classes, cfg.ufm_steps
    common: dict[str, Any] = dict(num_classes=k, n_per_class=cfg.ufm_per_class, steps=steps, seed=seed, device=device)
    results: dict[str, Any] = {}
    traces: dict[str, Any] = {}
    for name, coupled in (("sgd", True), ("sgdw", False)):
        tr = simulate_ufm(
            name,
            dim=cfg.ufm_dim,
            lr=cfg.ufm_sgd_lr,
            momentum=cfg.ufm_sgd_momentum,
            weight_decay=cfg.ufm_sgd_wd,
            features="free",
            init_std=0.1,
            **common,
        )
        theory = sgd_alpha_theory(
            tr.alpha[0],
            lr=cfg.ufm_sgd_lr,
            weight_decay=cfg.ufm_sgd_wd,
            momentum=cfg.ufm_sgd_momentum,
            steps=steps,
            coupled=coupled,
        )
        results[name] = {
            "alpha0": tr.alpha[0],
            "alpha_final": tr.alpha[-1],
            "theory_final": theory[-1],
            "decay_ratio": tr.alpha[-1] / tr.alpha[0],
            "max_rel_error": max_relative_error(tr.alpha, theory, floor=1e-16 * tr.alpha[0]),
            "train_acc": tr.accuracy,
        }
        traces[name] = (tr.alpha, theory)
    # Theorem 3.3: SignGD with decoupled WD, features fixed at the ETF, W_0 = 0, p = K
    lr, wd = cfg.ufm_sign_lr, cfg.ufm_sign_wd
    tr = simulate_ufm("signumw", lr=lr, weight_decay=wd, features="etf", init_std=0.0, **common)
    theory = signgd_decoupled_alpha_theory(num_classes=k, lr=lr, weight_decay=wd, steps=steps)
    diffs = [b - a for a, b in zip(tr.alpha[:-1], tr.alpha[1:], strict=True)]
    limit = signgd_decoupled_limit(k, wd)
    results["signumw"] = {
        "alpha_final": tr.alpha[-1],
        "limit": limit,
        "rel_gap_to_limit": abs(tr.alpha[-1] - limit) / limit,
        "max_rel_error": max_relative_error(tr.alpha[1:], theory[1:], floor=1e-300),
        "monotone": all(d >= -1e-12 * limit for d in diffs),
        "max_drop_rel": max(0.0, -min(diffs)) / limit,
        "train_acc": tr.accuracy,
    }
    traces["signumw"] = (tr.alpha, theory)
    # Theorem 3.4: SignGD with coupled WD from W_0 = 0, constant vs decaying step
    tail = max(1, steps // 10)
    for sched in ("constant", "inverse"):
        tr = simulate_ufm(
            "signum",
            lr=lr,
            weight_decay=wd,
            features="etf",
            init_std=0.0,
            lr_schedule=sched,
            lr_tau=cfg.ufm_lr_tau,
            **common,
        )
        peak = max(tr.alpha)
        results[f"signum_{sched}"] = {
            "alpha_peak": peak,
            "alpha_tail_max": max(tr.alpha[-tail:]),
            "tail_over_peak": max(tr.alpha[-tail:]) / peak if peak > 0 else 0.0,
            "non_monotone": any(b < a for a, b in zip(tr.alpha[:-1], tr.alpha[1:], strict=True)),
            "max_drop_over_peak": max(0.0, *(a - b for a, b in zip(tr.alpha[:-1], tr.alpha[1:], strict=True))) / peak
            if peak > 0
            else 0.0,
            "train_acc": tr.accuracy,
        }
        traces[f"signum_{sched}"] = (tr.alpha, None)
    results["config"] = {"K": k, "sgd_lr": cfg.ufm_sgd_lr, "sgd_wd": cfg.ufm_sgd_wd, "sign_lr": lr, "sign_wd": wd}
    return results, traces


def train_one(
    spec: RunSpec,
    data: ImageTensors,
    cfg: NeuralCollapseConfig,
    *,
    device: torch.device,
    seed: int,
    run_dir: RunDir | None = None,
    step0: int = 0,
    index: int = 0,
) -> dict[str, Any]:
    """Train one model with ``spec``; log every epoch's metrics; return the run's summary (JSON values)."""
    torch.manual_seed(seed)
    model = build_run_model(cfg, data.image_shape, data.num_classes).to(device)
    opt, sched = build_run_optimizer(spec, model, cfg)
    recorder = NCRecorder(
        run_dir,
        {
            "run": index,
            "optimizer": spec.optimizer,
            "lr": spec.lr,
            "momentum": spec.momentum,
            "weight_decay": spec.weight_decay,
        },
        num_classes=data.num_classes,
        device=device,
        batch_size=cfg.eval_batch_size,
        nc0_squared=cfg.nc0_squared,
        nc4_form=cfg.nc4_form,
        scale=cfg.nc_scale,
    )
    x_tr, y_tr = data.x_train.to(device), data.y_train.to(device)
    test = (data.x_test.to(device), data.y_test)
    gen = torch.Generator().manual_seed(seed + 1)
    n = x_tr.shape[0]
    t0 = time.perf_counter()
    first = recorder.record(step0, 0, model, (x_tr, y_tr), test, lr_now=spec.lr)
    diverged = False
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        lr_now = opt.param_groups[0]["lr"]
        order = torch.randperm(n, generator=gen).to(device)
        for start in range(0, n, cfg.batch_size):
            idx = order[start : start + cfg.batch_size]
            loss = torch.nn.functional.cross_entropy(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sched.step()
        row = recorder.record(step0 + epoch, epoch, model, (x_tr, y_tr), test, lr_now=lr_now)
        if math.isnan(row["train_loss"]):
            diverged = True
            break
    last = recorder.history[-1]
    keys = [k for k in last if k not in ("run", "optimizer", "lr", "momentum", "weight_decay", "lr_now")]
    return {
        "index": index,
        "optimizer": spec.optimizer,
        "lr": spec.lr,
        "momentum": spec.momentum,
        "weight_decay": spec.weight_decay,
        "role": spec.role,
        "label": spec.label,
        "epochs_run": int(last["epoch"]),
        "diverged": diverged,
        "valid": (not diverged) and last["train_acc"] >= cfg.valid_accuracy,
        "seconds": time.perf_counter() - t0,
        "init": {k: first[k] for k in keys if k != "epoch"},
        "final": {k: last[k] for k in keys if k != "epoch"},
        "nc1_epoch_mean": sum(r["nc1"] for r in recorder.history[1:]) / max(len(recorder.history) - 1, 1),
        "nc3_epoch_mean": sum(r["nc3"] for r in recorder.history[1:]) / max(len(recorder.history) - 1, 1),
    }


def run(cfg: NeuralCollapseConfig, run_dir: RunDir) -> dict[str, Any]:
    """The method's ``run``: UFM checks, the training grid, the regression and the plots."""
    device = run_dir.device
    state: dict[str, Any] = {"ufm": None, "runs": []}
    ckpt = run_dir.load_checkpoint()
    if ckpt is not None:
        state = ckpt[1]
    ufm_results, ufm_traces = None, None
    if cfg.ufm:
        if state.get("ufm") is None or not run_dir.figure_path("ufm_sgd").exists():
            ufm_results, ufm_traces = ufm_study(cfg, device, run_dir.seed)
            state["ufm"] = ufm_results
            plot_ufm(run_dir, ufm_traces, num_classes=cfg.ufm_classes, steps=cfg.ufm_steps)
        ufm_results = state["ufm"]
    runs: list[dict[str, Any]] = list(state.get("runs", []))
    data = None
    if cfg.train:
        data = load_image_tensors(
            cfg.dataset, n_train=cfg.n_train, n_test=cfg.n_test, seed=run_dir.seed, scale="standardize"
        )
        specs = expand_grid(cfg)
        done = len(runs)
        with run_dir.progress(len(specs), "neural-collapse", completed=done) as bar:
            for i, spec in enumerate(specs[done:], start=done):
                summary = train_one(
                    spec,
                    data,
                    cfg,
                    device=device,
                    seed=run_dir.seed,
                    run_dir=run_dir,
                    step0=i * (cfg.epochs + 1),
                    index=i,
                )
                runs.append(summary)
                run_dir.save_checkpoint((i + 1) * (cfg.epochs + 1) - 1, {"ufm": state.get("ufm"), "runs": runs})
                final = summary["final"]
                bar.advance(
                    run=spec.label,  # pyright: ignore[reportArgumentType]  (the bar prints a str as text)
                    train_acc=final["train_acc"],
                    nc0=final["nc0"],
                    nc3=final["nc3"],
                )
        plot_training(run_dir, runs, run_dir.read_metrics())
    results: dict[str, Any] = {"ufm": ufm_results, "runs": runs}
    if cfg.train and data is not None:
        results["data"] = {
            "dataset": data.name,
            "n_train": int(data.x_train.shape[0]),
            "n_test": int(data.x_test.shape[0]),
            "num_classes": data.num_classes,
            "model": cfg.model,
            "feature_dim": 8 * cfg.width,
        }
        results.update(summarise(runs, valid_accuracy=cfg.valid_accuracy))
    return results
