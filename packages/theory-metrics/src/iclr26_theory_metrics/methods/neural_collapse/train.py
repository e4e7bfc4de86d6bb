"""``neural-collapse`` run: UFM theorem checks, then a grid of real training runs with NC metrics per epoch.

Each training run: the model (seeded identically for every run, so all optimizers start from the same
weights), minibatch training with cross-entropy, weight decay on every parameter, the learning rate ×0.1 at
1/3 and 2/3 of the epochs (Papyan et al.), and at epoch 0 and after every epoch one row in ``metrics.jsonl``
with all NC metrics (:class:`~iclr26_theory_metrics.recorder.NCRecorder`). A checkpoint after every finished
run holds the summaries so far, so ``--resume`` continues with the next run.

Training goes through :mod:`iclr26_shared.distributed`, so the method runs under ``torchrun`` unchanged
(``uv run torchrun --nproc-per-node 2 -m iclr26_theory_metrics neural-collapse ...``): the model is wrapped in
DDP and every global minibatch of ``batch_size`` is split over the ranks (``idx[rank::world]``, uneven shares
allowed: each rank sums its per-sample losses and scales by world / |batch|, so DDP's averaged gradient is the
single-process mean gradient of the same global batch). The metric passes (:class:`NCRecorder`) run on the whole
data on every rank (identical weights give identical metrics) and only rank 0 writes. With world size 1 nothing
changes: the model is not wrapped and the loss is the plain batch mean, bit-for-bit as before. BatchNorm
statistics are per rank under DDP (no SyncBatchNorm on CPU), so BN models (ResNet9, VGG9) follow the single
process only approximately; the MLP follows it up to float summation order.
"""

from __future__ import annotations

import math
import re
import time
from typing import Any

import torch

from iclr26_shared.distributed import DistContext
from iclr26_shared.errors import UsageError
from iclr26_shared.images import ImageTensors, load_image_tensors
from iclr26_shared.runs import RunDir
from iclr26_theory_metrics.analysis import summarise
from iclr26_theory_metrics.methods.neural_collapse.config import NeuralCollapseConfig, RunSpec, expand_grid
from iclr26_theory_metrics.methods.neural_collapse.model import build_run_model, build_run_optimizer
from iclr26_theory_metrics.plotting import plot_training, plot_ufm
from iclr26_theory_metrics.recorder import NCRecorder
from iclr26_theory_metrics.ufm import (
    empirical_rate,
    max_relative_error,
    sgd_alpha_rate,
    sgd_alpha_theory,
    signgd_alpha_bound,
    signgd_decoupled_alpha_theory,
    signgd_decoupled_limit,
    simulate_ufm,
)

__all__ = ["dry_run", "run", "train_one", "ufm_study"]


def _drops(alpha: list[float]) -> list[float]:
    return [a - b for a, b in zip(alpha[:-1], alpha[1:], strict=True)]


def ufm_study(cfg: NeuralCollapseConfig, device: torch.device, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Claim 1: the UFM simulations of Theorems 3.1–3.4 with the real optimizer classes, compared with the
    statements and closed forms of :mod:`iclr26_theory_metrics.ufm`; returns ``(results, traces)`` (traces: α_t
    curves for the plots).

    * Thms 3.1/3.2 from a generic start (random W_0 and free features): α_t against the closed form, its decay
      α_T/α_0 and per-step rate against ρ; then the condition: at ηλ halfway between 2 and 2(1+β) coupled SGD
      must decay and SGDW must not, and at ηλ = 1.25·2(1+β) coupled SGD must not either (100 steps each).
    * Thm 3.3 on the axis-aligned ETF (p = K, W_0 = 0): the closed form, monotonicity and the limit
      (K−2)²/λ²; and on a randomly rotated ETF (the basis dependence): α_t must stay bounded away from 0.
    * Thm 3.4: coupled SignGD from W_0 = 0, constant vs decaying step.
    """
    k, steps = cfg.ufm_classes, cfg.ufm_steps
    common: dict[str, Any] = dict(num_classes=k, n_per_class=cfg.ufm_per_class, seed=seed, device=device)
    lr, beta = cfg.ufm_sgd_lr, cfg.ufm_sgd_momentum
    results: dict[str, Any] = {}
    traces: dict[str, Any] = {}
    for name, coupled in (("sgd", True), ("sgdw", False)):
        kw: dict[str, Any] = dict(lr=lr, momentum=beta, weight_decay=cfg.ufm_sgd_wd)
        tr = simulate_ufm(name, dim=cfg.ufm_dim, steps=steps, features="free", init_std=0.1, **kw, **common)
        theory = sgd_alpha_theory(tr.alpha[0], steps=steps, coupled=coupled, **kw)
        floor = 1e-16 * tr.alpha[0]
        results[name] = {
            "alpha0": tr.alpha[0],
            "alpha_final": tr.alpha[-1],
            "theory_final": theory[-1],
            "decay_ratio": tr.alpha[-1] / tr.alpha[0],
            "max_rel_error": max_relative_error(tr.alpha, theory, floor=floor),
            "rate": empirical_rate(tr.alpha, floor=1e3 * floor),
            "theory_rate": sgd_alpha_rate(coupled=coupled, **kw),
            "train_acc": tr.accuracy,
        }
        traces[name] = (tr.alpha, theory)
    # the condition of Thm 3.2 vs Thm 3.1: 2 < ηλ < 2(1+β) separates coupled from decoupled WD
    cond_steps = min(steps, 100)
    condition: dict[str, Any] = {"steps": cond_steps}
    for key, name, eta_lambda in (
        ("sgd_inside", "sgd", 2.0 + beta),
        ("sgdw_inside", "sgdw", 2.0 + beta),
        ("sgd_outside", "sgd", 2.5 * (1.0 + beta)),
    ):
        kw = dict(lr=lr, momentum=beta, weight_decay=eta_lambda / lr)
        tr = simulate_ufm(name, dim=cfg.ufm_dim, steps=cond_steps, features="free", init_std=0.1, **kw, **common)
        ratio = tr.alpha[-1] / tr.alpha[0]
        condition[key] = {
            "eta_lambda": eta_lambda,
            "decay_ratio": ratio,
            "log10_decay_ratio": math.log10(ratio) if ratio > 0 else -math.inf,
            "theory_rate": sgd_alpha_rate(coupled=name == "sgd", **kw),
        }
    results["condition"] = condition
    # Theorem 3.3: SignGD with decoupled WD, features fixed at the ETF, W_0 = 0, p = K
    lr_s, wd = cfg.ufm_sign_lr, cfg.ufm_sign_wd
    sign_kw: dict[str, Any] = dict(lr=lr_s, weight_decay=wd, features="etf", init_std=0.0, steps=steps, **common)
    tr = simulate_ufm("signumw", **sign_kw)
    theory = signgd_decoupled_alpha_theory(num_classes=k, lr=lr_s, weight_decay=wd, steps=steps)
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
    # the same on a randomly rotated ETF: the closed form is basis-dependent, α_t must still not vanish
    tail = max(1, steps // 10)
    tr = simulate_ufm("signumw", feature_rotation_seed=seed, **sign_kw)
    peak = max(tr.alpha)
    results["signumw_rotated"] = {
        "alpha_final": tr.alpha[-1],
        "alpha_peak": peak,
        "tail_min_over_peak": min(tr.alpha[-tail:]) / peak if peak > 0 else 0.0,
        "axis_limit": limit,
        "bound": signgd_alpha_bound(k, k, wd),
        "monotone": all(d <= 1e-12 * peak for d in _drops(tr.alpha)),
        "train_acc": tr.accuracy,
    }
    traces["signumw_rotated"] = (tr.alpha, None)
    # Theorem 3.4: SignGD with coupled WD from W_0 = 0, constant vs decaying step
    for sched in ("constant", "inverse"):
        tr = simulate_ufm("signum", lr_schedule=sched, lr_tau=cfg.ufm_lr_tau, **sign_kw)
        peak = max(tr.alpha)
        results[f"signum_{sched}"] = {
            "alpha_peak": peak,
            "alpha_tail_max": max(tr.alpha[-tail:]),
            "tail_over_peak": max(tr.alpha[-tail:]) / peak if peak > 0 else 0.0,
            "non_monotone": any(d > 0 for d in _drops(tr.alpha)),
            "max_drop_over_peak": max(0.0, *_drops(tr.alpha)) / peak if peak > 0 else 0.0,
            "train_acc": tr.accuracy,
        }
        traces[f"signum_{sched}"] = (tr.alpha, None)
    results["config"] = {"K": k, "sgd_lr": lr, "sgd_wd": cfg.ufm_sgd_wd, "sign_lr": lr_s, "sign_wd": wd}
    return results, traces


def model_name(index: int, spec: RunSpec) -> str:
    """The saved model's name of grid run ``index``: ``run00-sgd-lr0.01-m0.9-wd0.05`` (its label as a folder name)."""
    return f"run{index:02d}-" + re.sub(r"[^A-Za-z0-9.]+", "-", spec.label.replace("=", "")).strip("-")


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
        nc3_form=cfg.nc3_form,
    )
    x_tr, y_tr = data.x_train.to(device), data.y_train.to(device)
    test = (data.x_test.to(device), data.y_test)
    gen = torch.Generator().manual_seed(seed + 1)
    n = x_tr.shape[0]
    dist = run_dir.dist if run_dir is not None else DistContext()
    world = dist.world_size
    if world > 1 and min(cfg.batch_size, n % cfg.batch_size or cfg.batch_size) < world:
        raise UsageError(
            f"batch_size: every minibatch needs at least one sample per process (batch {cfg.batch_size}, last batch "
            f"{n % cfg.batch_size or cfg.batch_size} of {n} training images, {world} processes); lower "
            "torchrun --nproc-per-node or change batch_size / n_train"
        )
    net = dist.wrap(model)
    t0 = time.perf_counter()
    first = recorder.record(step0, 0, model, (x_tr, y_tr), test, lr_now=spec.lr)
    diverged = False
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        lr_now = opt.param_groups[0]["lr"]
        order = torch.randperm(n, generator=gen).to(device)
        for start in range(0, n, cfg.batch_size):
            idx = order[start : start + cfg.batch_size]
            if world == 1:
                loss = torch.nn.functional.cross_entropy(net(x_tr[idx]), y_tr[idx])
            else:  # this rank's share; sum × world / |batch| makes DDP's gradient average the global batch mean
                share = idx[dist.rank :: world]
                loss = torch.nn.functional.cross_entropy(net(x_tr[share]), y_tr[share], reduction="sum")
                loss = loss * (world / idx.numel())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sched.step()
        row = recorder.record(step0 + epoch, epoch, model, (x_tr, y_tr), test, lr_now=lr_now)
        if math.isnan(row["train_loss"]):
            diverged = True
            break
    if run_dir is not None:  # the trained network, for reuse: iclr26_shared.load_model(run, model_name(index, spec))
        run_dir.save_model(model_name(index, spec), model, extra={"label": spec.label, "input": "[B, C, H, W]"})
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
        "trajectory": {key: [r[key] for r in recorder.history] for key in ("train_loss", "nc1", "nc3")},
    }


def run(cfg: NeuralCollapseConfig, run_dir: RunDir) -> dict[str, Any]:
    """The method's ``run``: UFM checks, the training grid, the regression and the plots."""
    device = run_dir.device
    state: dict[str, Any] = {"ufm": None, "runs": []}
    ckpt = run_dir.load_checkpoint()
    if ckpt is not None:
        state = ckpt[1]
    # the image set first, so that an absent opt-in set is one line before anything is computed or plotted
    data = None
    if cfg.train:
        data = load_image_tensors(
            cfg.dataset, n_train=cfg.n_train, n_test=cfg.n_test, seed=run_dir.seed, scale="standardize"
        )
    ufm_results, ufm_traces = None, None
    if cfg.ufm:
        if state.get("ufm") is None or not run_dir.figure_path("ufm_sgd").exists():
            ufm_results, ufm_traces = ufm_study(cfg, device, run_dir.seed)
            state["ufm"] = ufm_results
            plot_ufm(run_dir, ufm_traces, num_classes=cfg.ufm_classes, steps=cfg.ufm_steps)
        ufm_results = state["ufm"]
    runs: list[dict[str, Any]] = list(state.get("runs", []))
    if data is not None:
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
            "nc3_form": cfg.nc3_form,
            "nc_scale": cfg.nc_scale,
        }
        results.update(summarise(runs, valid_accuracy=cfg.valid_accuracy))
    return results


def dry_run(cfg: NeuralCollapseConfig, device: torch.device) -> dict[str, Any]:
    """``--dry-run``: the preset's network (``cfg.model``, ``cfg.width``) on 20 training / 10 test images of
    ``cfg.dataset``, with the optimizer of every run of the grid; one training step of the first run at batch 2 and
    one evaluation step (logits, loss and penultimate features on 2 test images). With ``train=False`` (the UFM
    study alone) there is no network: a one-line usage error."""
    if not cfg.train:
        raise UsageError("train: --dry-run checks the trained network; this preset runs the UFM study only")
    data = load_image_tensors(cfg.dataset, n_train=20, n_test=10, seed=0, scale="standardize")
    specs = expand_grid(cfg)
    model = build_run_model(cfg, data.image_shape, data.num_classes).to(device)
    for spec in specs[1:]:  # every optimizer of the grid builds on these parameters
        build_run_optimizer(spec, model, cfg)
    opt, _ = build_run_optimizer(specs[0], model, cfg)
    x, y = data.x_train[:2].to(device), data.y_train[:2].to(device)
    model.train()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        xt, yt = data.x_test[:2].to(device), data.y_test[:2].to(device)
        eval_loss = float(torch.nn.functional.cross_entropy(model(xt), yt))
        feats = model.features(xt)
    return {
        "parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "train_loss": float(loss.detach()),
        "eval_loss": eval_loss,
        "feature_dim": int(feats.shape[1]),
        "grid_runs": len(specs),
    }
