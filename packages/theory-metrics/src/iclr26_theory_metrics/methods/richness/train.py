"""``richness`` run (Nam et al., ICLR 2026): D_LR and the paper's baselines over training, in three studies.

1. Grokking (the paper's modular-addition experiment, Table 1's first rows): a 2-layer transformer on a + b mod P,
   full-batch AdamW with weight decay; every ``eval_every`` steps one ``metrics.jsonl`` row (``phase="grokking"``)
   with the train/test accuracy and loss, D_LR of the training and the test features, and the baselines (initial-
   kernel distance, parameter norm ‖θ‖², NC1). Trained through :mod:`iclr26_shared.distributed` (the training
   set is split over ranks, so it runs under ``torchrun`` unchanged; the image studies are small and run whole
   on every rank, rank 0 writing).
2. Lazy vs rich (the paper's MNIST comparison): the same MLP from the same initialisation, trained with only its
   last layer (lazy: the random features of the initialisation) or fully (rich), on a real image set; one row per
   epoch (``phase="lazy"``/``"rich"``); squared loss on one-hot targets by default (the paper's setting of
   orthogonal, isotropic targets), cross-entropy with ``image_loss="ce"``. The stress test (the paper's weight
   decay / target down-scaling α): extra rich runs with weight decay or targets α·one-hot, and the spread
   log10(max/min) of D_LR and of each baseline over the rich runs.
3. A controlled check where the effect is known to be large: planted features that are a noisy code of the label
   (rich by construction) against random Gaussian features (lazy by construction), each with the least-squares
   read-out of the one-hot label as its outputs, measured through the same streamed estimator.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from iclr26_shared.images import ImageTensors, load_image_tensors
from iclr26_shared.plotting import plot_curves
from iclr26_shared.runs import RunDir
from iclr26_theory_metrics.data.modular import modular_addition
from iclr26_theory_metrics.methods.richness.config import RichnessConfig
from iclr26_theory_metrics.methods.richness.model import (
    Regime,
    build_grokking_model,
    build_grokking_optimizer,
    build_image_model,
    build_image_optimizer,
    build_vgg,
)
from iclr26_theory_metrics.nn.models import FeatureClassifier
from iclr26_theory_metrics.ops.neural_collapse import NCInputError, neural_collapse_metrics
from iclr26_theory_metrics.ops.richness import (
    RichnessAccumulator,
    kernel_distance,
    parameter_norm,
    richness_spectrum,
)
from iclr26_theory_metrics.plotting import plot_richness_spectrum

__all__ = [
    "batch_norm_study",
    "control_study",
    "dry_run",
    "grokking_study",
    "image_data",
    "lazy_rich_study",
    "measure",
    "run",
]


@torch.no_grad()
def measure(
    model: FeatureClassifier, x: torch.Tensor, y: torch.Tensor, *, batch_size: int, centre_outputs: bool = True
) -> tuple[dict[str, float], torch.Tensor]:
    """One streamed pass over ``(x, y)``: accuracy, cross-entropy and D_LR of the features against the outputs;
    returns ``(metrics, features [n, p] in float64)`` (the features feed the kernel distance and NC1)."""
    was_training = model.training
    model.eval()
    acc = RichnessAccumulator(centre_outputs=centre_outputs)
    feats: list[torch.Tensor] = []
    correct, loss = 0.0, 0.0
    for start in range(0, x.shape[0], batch_size):
        xb, yb = x[start : start + batch_size], y[start : start + batch_size]
        h = model.features(xb)
        out = model.classifier(h)
        acc.update(h, out)
        feats.append(h.double())
        correct += float((out.argmax(1) == yb).sum())
        loss += float(torch.nn.functional.cross_entropy(out, yb, reduction="sum"))
    model.train(was_training)
    n = x.shape[0]
    return {"acc": correct / n, "loss": loss / n, "d_lr": acc.value()}, torch.cat(feats)


def _nc1(features: torch.Tensor, labels: torch.Tensor, model: FeatureClassifier) -> float:
    """NC1 (the paper's third baseline) of the training features; NaN when it is undefined (e.g. a class with
    fewer than one sample)."""
    try:
        return neural_collapse_metrics(features, labels, model.classifier.weight.detach())["nc1"]
    except NCInputError:
        return math.nan


def _row(
    model: FeatureClassifier,
    train: tuple[torch.Tensor, torch.Tensor],
    test: tuple[torch.Tensor, torch.Tensor],
    init_features: torch.Tensor | None,
    batch_size: int,
    centre_outputs: bool = True,
) -> tuple[dict[str, float], torch.Tensor]:
    tr, feats = measure(model, *train, batch_size=batch_size, centre_outputs=centre_outputs)
    te, _ = measure(model, *test, batch_size=batch_size, centre_outputs=centre_outputs)
    row = {
        "train_acc": tr["acc"],
        "train_loss": tr["loss"],
        "test_acc": te["acc"],
        "test_loss": te["loss"],
        "d_lr": tr["d_lr"],
        "d_lr_test": te["d_lr"],
        "kernel_distance": 0.0 if init_features is None else kernel_distance(init_features, feats),
        "param_norm": parameter_norm(model),
        "nc1": _nc1(feats, train[1], model),
    }
    return row, feats


def _first(rows: list[dict[str, Any]], key: str, level: float) -> dict[str, Any] | None:
    return next((r for r in rows if r[key] >= level), None)


def _corr(xs: list[float], ys: list[float]) -> float:
    """Pearson correlation (NaN for fewer than 3 points or a constant side)."""
    pts = [(a, b) for a, b in zip(xs, ys, strict=True) if math.isfinite(a) and math.isfinite(b)]
    if len(pts) < 3:
        return math.nan
    t = torch.tensor(pts, dtype=torch.float64)
    t = t - t.mean(0)
    den = float(t[:, 0].norm() * t[:, 1].norm())
    return float(t[:, 0] @ t[:, 1]) / den if den > 0 else math.nan


def grokking_study(cfg: RichnessConfig, run_dir: RunDir) -> dict[str, Any]:
    """Claim 1: full-batch AdamW on modular addition, D_LR and the baselines every ``eval_every`` steps; returns
    the curve and its landmarks: the memorisation step (train accuracy first 100 %) and the grokking step (test
    accuracy first ≥ ``grok_accuracy``) with D_LR and accuracies there."""
    dist, device, seed = run_dir.dist, run_dir.device, run_dir.seed
    data = modular_addition(cfg.modulus, train_fraction=cfg.train_fraction, seed=seed)
    x_tr, y_tr = data.x_train.to(device), data.y_train.to(device)
    test = (data.x_test.to(device), data.y_test.to(device))
    torch.manual_seed(seed)
    model = build_grokking_model(cfg).to(device)
    opt = build_grokking_optimizer(model, cfg)
    ddp = dist.wrap(model)
    # this rank's share of the full batch (uneven shares allowed: each rank sums its losses and divides by the
    # global count times 1/world, so DDP's gradient average is the full-batch mean gradient)
    n_global, world = x_tr.shape[0], dist.world_size
    xs, ys = x_tr[dist.rank :: world], y_tr[dist.rank :: world]
    rows: list[dict[str, Any]] = []
    init_feats: torch.Tensor | None = None
    t0 = time.perf_counter()
    with run_dir.progress(cfg.grok_steps, "richness: grokking") as bar:
        for step in range(cfg.grok_steps + 1):
            if step % cfg.eval_every == 0 or step == cfg.grok_steps:
                row, feats = _row(model, (x_tr, y_tr), test, init_feats, cfg.eval_batch_size, cfg.centre_outputs)
                if init_feats is None:
                    init_feats = feats
                rows.append({"step": step, **row})
                run_dir.log(step, phase="grokking", **row)
            if step == cfg.grok_steps:
                break
            if world == 1:
                loss = torch.nn.functional.cross_entropy(ddp(xs), ys)
            else:
                loss = torch.nn.functional.cross_entropy(ddp(xs), ys, reduction="sum") * (world / n_global)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if rows and rows[-1]["step"] == step:
                bar.advance(
                    cfg.eval_every, loss=float(loss.detach()), test_acc=rows[-1]["test_acc"], d_lr=rows[-1]["d_lr"]
                )
    mem = _first(rows, "train_acc", 1.0)
    grok = _first(rows, "test_acc", cfg.grok_accuracy)
    after = [r for r in rows if mem is not None and r["step"] >= mem["step"]]
    drops = [(a["d_lr"] - b["d_lr"], b["step"]) for a, b in zip(after[:-1], after[1:], strict=True)]
    spectra = {}
    if dist.is_main:
        _, feats = measure(model, x_tr, y_tr, batch_size=cfg.eval_batch_size)
        onehot = torch.nn.functional.one_hot(y_tr, cfg.modulus).double()
        with torch.no_grad():
            outputs = model.classifier(feats.to(model.classifier.weight.dtype)).double()
        spectra["final"] = richness_spectrum(feats, outputs, onehot)
        plot_richness_spectrum(
            run_dir.figure_path("grokking_spectrum"), spectra["final"], title="grokking: end of training"
        )
        steps = [float(r["step"]) for r in rows]
        plot_curves(
            run_dir.figure_path("grokking_curve"),
            {key: (steps, [float(r[key]) for r in rows]) for key in ("train_acc", "test_acc", "d_lr", "d_lr_test")},
            xlabel="step",
            ylabel="",
            title=f"grokking, a + b mod {cfg.modulus}",
        )
        base = rows[0]
        plot_curves(
            run_dir.figure_path("grokking_baselines"),
            {
                "D_LR": (steps, [float(r["d_lr"]) for r in rows]),
                "kernel distance": (steps, [float(r["kernel_distance"]) for r in rows]),
                "‖θ‖² / ‖θ_0‖²": (steps, [float(r["param_norm"]) / base["param_norm"] for r in rows]),
                "NC1 / NC1_0": (steps, [float(r["nc1"]) / base["nc1"] for r in rows]),
            },
            xlabel="step",
            ylabel="",
            title="D_LR and the baselines",
        )

    def at(r: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if r is None else dict(r)

    run_dir.save_model("grokking", model, extra={"input": "tokens [B, 3] = [a, b, =]", "modulus": cfg.modulus})

    return {
        "modulus": cfg.modulus,
        "n_train": int(x_tr.shape[0]),
        "n_test": int(test[0].shape[0]),
        "steps": cfg.grok_steps,
        "grok_accuracy": cfg.grok_accuracy,
        "final_window": cfg.final_window,
        "chance": 1.0 / cfg.modulus,
        # isotropic random features already sit here (1 − √(r/p), r = C − 1 centred outputs ≤ p): the room D_LR has
        "random_level": 1.0 - math.sqrt(min(cfg.modulus - 1, cfg.dim) / cfg.dim),
        "seconds": time.perf_counter() - t0,
        "world_size": dist.world_size,
        "init": at(rows[0]),
        "memorised": at(mem),
        "grokked": at(grok),
        "final": at(rows[-1]),
        "largest_drop_after_memorisation": None if not drops else {"drop": max(drops)[0], "step": max(drops)[1]},
        "corr_d_lr_test_acc_after_memorisation": _corr([r["d_lr"] for r in after], [r["test_acc"] for r in after]),
        "curve": {key: [r[key] for r in rows] for key in rows[0]},
        "spectrum": spectra.get("final"),
    }


def _train_image(
    cfg: RichnessConfig,
    regime: Regime,
    data: Any,
    run_dir: RunDir,
    step0: int,
    *,
    weight_decay: float = 0.0,
    target_scale: float = 1.0,
    phase: str = "",
    vgg_batch_norm: bool | None = None,
) -> tuple[dict[str, Any], FeatureClassifier]:
    """One image run: the MLP (``regime`` lazy/rich, ``cfg.image_loss``), or with ``vgg_batch_norm`` set the VGG
    with/without BatchNorm (cross-entropy, ``vgg_lr``, ``vgg_epochs``)."""
    phase = phase or regime
    device, seed = run_dir.device, run_dir.seed
    torch.manual_seed(seed)  # the same initialisation for both regimes
    flat = vgg_batch_norm is None
    x_tr = (data.x_train.flatten(1) if flat else data.x_train).to(device)
    y_tr = data.y_train.to(device)
    test = ((data.x_test.flatten(1) if flat else data.x_test).to(device), data.y_test.to(device))
    model: FeatureClassifier
    if vgg_batch_norm is None:
        model = build_image_model(cfg, x_tr.shape[1], data.num_classes, regime).to(device)
        opt = build_image_optimizer(model, cfg, weight_decay)
        epochs, loss_kind = cfg.epochs, cfg.image_loss
    else:
        model = build_vgg(cfg, data.channels, data.num_classes, batch_norm=vgg_batch_norm).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=cfg.vgg_lr, momentum=0.9)
        epochs, loss_kind = cfg.vgg_epochs, "ce"
    gen = torch.Generator().manual_seed(seed + 1)
    row, init_feats = _row(model, (x_tr, y_tr), test, None, cfg.eval_batch_size, cfg.centre_outputs)
    rows = [{"epoch": 0, **row}]
    run_dir.log(step0, phase=phase, epoch=0, **row)
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(x_tr.shape[0], generator=gen).to(device)
        for start in range(0, x_tr.shape[0], cfg.batch_size):
            idx = order[start : start + cfg.batch_size]
            out = model(x_tr[idx])
            if loss_kind == "mse":
                target = target_scale * torch.nn.functional.one_hot(y_tr[idx], data.num_classes).to(out.dtype)
                loss = (out - target).square().sum(1).mean()
            else:
                loss = torch.nn.functional.cross_entropy(out, y_tr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        row, _ = _row(model, (x_tr, y_tr), test, init_feats, cfg.eval_batch_size, cfg.centre_outputs)
        rows.append({"epoch": epoch, **row})
        run_dir.log(step0 + epoch, phase=phase, epoch=epoch, **row)
    return {"init": rows[0], "final": rows[-1], "curve": {k: [r[k] for r in rows] for k in rows[0]}}, model


def image_data(cfg: RichnessConfig, seed: int) -> ImageTensors:
    """``cfg.dataset`` (class-stratified ``n_train``/``n_test`` subsets, standardised), as the image studies use
    it; an absent opt-in set raises :class:`~iclr26_shared.errors.DataError` naming it and how to get it."""
    return load_image_tensors(cfg.dataset, n_train=cfg.n_train, n_test=cfg.n_test, seed=seed, scale="standardize")


def lazy_rich_study(cfg: RichnessConfig, run_dir: RunDir, data: ImageTensors | None = None) -> dict[str, Any]:
    """Claim 2: the MLP trained lazily (last layer only) and richly (all layers) from the same initialisation on
    ``cfg.dataset`` (``data``, loaded by :func:`image_data` when None); D_LR and the baselines per epoch, the
    spectra of the final training features."""
    data = image_data(cfg, run_dir.seed) if data is None else data
    out: dict[str, Any] = {
        "dataset": data.name,
        "n_train": int(data.x_train.shape[0]),
        "n_test": int(data.x_test.shape[0]),
        "num_classes": data.num_classes,
        "feature_dim": 8 * cfg.width,
        "chance": 1.0 / data.num_classes,
    }
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for i, regime in enumerate(("lazy", "rich")):
        step0 = cfg.grok_steps + 1 + i * (cfg.epochs + 1)  # after the grokking rows in metrics.jsonl
        res, model = _train_image(cfg, regime, data, run_dir, step0=step0)
        run_dir.save_model(regime, model, extra={"input": "flattened images [B, H·W·C]", "regime": regime})
        x = data.x_train.flatten(1).to(run_dir.device)
        _, feats = measure(model, x, data.y_train.to(run_dir.device), batch_size=cfg.eval_batch_size)
        with torch.no_grad():
            outputs = model.classifier(feats.float()).double()
        onehot = torch.nn.functional.one_hot(data.y_train, data.num_classes).double().to(feats.device)
        res["spectrum"] = richness_spectrum(feats, outputs, onehot)
        if run_dir.dist.is_main:
            plot_richness_spectrum(
                run_dir.figure_path(f"{regime}_spectrum"), res["spectrum"], title=f"{regime} training"
            )
        epochs = [float(e) for e in res["curve"]["epoch"]]
        curves[f"{regime} D_LR"] = (epochs, [float(v) for v in res["curve"]["d_lr"]])
        curves[f"{regime} train acc"] = (epochs, [float(v) for v in res["curve"]["train_acc"]])
        out[regime] = res
    if run_dir.dist.is_main:
        plot_curves(
            run_dir.figure_path("lazy_rich"), curves, xlabel="epoch", ylabel="", title=f"{data.name}: lazy vs rich"
        )
    settings = [(wd, 1.0) for wd in cfg.stress_weight_decays] + [(0.0, a) for a in cfg.stress_target_scales]
    if settings:
        runs = [{"label": "rich (wd 0, α 1)", "weight_decay": 0.0, "target_scale": 1.0, "final": out["rich"]["final"]}]
        for i, (wd, alpha) in enumerate(settings, start=2):
            step0 = cfg.grok_steps + 1 + i * (cfg.epochs + 1)
            label = f"rich (wd {wd:g}, α {alpha:g})"
            res, _ = _train_image(
                cfg, "rich", data, run_dir, step0, weight_decay=wd, target_scale=alpha, phase=f"stress {label}"
            )
            runs.append({"label": label, "weight_decay": wd, "target_scale": alpha, "final": res["final"]})
        out["stress"] = {"runs": runs, "spread": _spreads([r["final"] for r in runs])}
    return out


def batch_norm_study(
    cfg: RichnessConfig, run_dir: RunDir, step0: int, data: ImageTensors | None = None
) -> dict[str, Any]:
    """Claim 3: the small VGG with and without BatchNorm from the same seed on ``cfg.dataset`` (``data``, loaded by
    :func:`image_data` when None); D_LR and the baselines per epoch (``phase="vgg bn"/"vgg no bn"``)."""
    data = image_data(cfg, run_dir.seed) if data is None else data
    out: dict[str, Any] = {
        "dataset": data.name,
        "feature_dim": 8 * cfg.vgg_width,
        "epochs": cfg.vgg_epochs,
        "chance": 1.0 / data.num_classes,
    }
    for j, (key, bn) in enumerate((("without", False), ("with", True))):
        res, vgg = _train_image(
            cfg,
            "rich",
            data,
            run_dir,
            step0 + j * (cfg.vgg_epochs + 1),
            phase="vgg bn" if bn else "vgg no bn",
            vgg_batch_norm=bn,
        )
        run_dir.save_model(f"vgg-{'bn' if bn else 'no-bn'}", vgg, extra={"input": "[B, C, H, W]", "batch_norm": bn})
        out[key] = res
    return out


#: The quantities compared by the stress test: D_LR and the paper's three baselines.
STRESS_KEYS: tuple[str, ...] = ("d_lr", "kernel_distance", "param_norm", "nc1")


def _spreads(finals: list[dict[str, Any]]) -> dict[str, float]:
    """log10(max / min) of each of :data:`STRESS_KEYS` over the runs (NaN when a value is not positive)."""
    out = {}
    for key in STRESS_KEYS:
        vals = [float(f[key]) for f in finals]
        ok = all(math.isfinite(v) and v > 0 for v in vals)
        out[key] = math.log10(max(vals) / min(vals)) if ok else math.nan
    return out


def control_study(cfg: RichnessConfig, seed: int) -> dict[str, Any]:
    """The controlled check: n samples of C balanced classes; rich features = a random class code [C, p] of the
    label plus noise of std 0.1, lazy features = Gaussian noise independent of the label; outputs = the least-
    squares read-out of the one-hot label (with a bias) from each. D_LR is streamed in ``eval_batch_size`` chunks
    as in the training studies. The planted rich set is near the minimum-projection ideal (D_LR ≈ 0), the lazy one
    far from it (D_LR ≈ 1 − √((C−1)/p): the read-out has centred rank C − 1)."""
    gen = torch.Generator().manual_seed(seed)
    n, p, c = cfg.control_n, cfg.control_dim, cfg.control_classes
    y = torch.arange(n) % c
    onehot = torch.nn.functional.one_hot(y, c).double()
    code = torch.randn(c, p, generator=gen, dtype=torch.float64)
    planted = {
        "rich": code[y] + 0.1 * torch.randn(n, p, generator=gen, dtype=torch.float64),
        "lazy": torch.randn(n, p, generator=gen, dtype=torch.float64),
    }
    # a least-squares read-out with an intercept: rows sum to 1, so the outputs' centred rank is C − 1
    out: dict[str, Any] = {"n": n, "p": p, "classes": c, "lazy_expected": 1.0 - math.sqrt((c - 1) / p)}
    for name, phi in planted.items():
        design = torch.cat([phi, torch.ones(n, 1, dtype=torch.float64)], 1)
        outputs = design @ torch.linalg.lstsq(design, onehot).solution
        acc = RichnessAccumulator(centre_outputs=cfg.centre_outputs)
        for start in range(0, n, cfg.eval_batch_size):
            acc.update(phi[start : start + cfg.eval_batch_size], outputs[start : start + cfg.eval_batch_size])
        out[name] = {"d_lr": acc.value(), "train_acc": float((outputs.argmax(1) == y).double().mean())}
    return out


def run(cfg: RichnessConfig, run_dir: RunDir) -> dict[str, Any]:
    """The method's ``run``: the controlled check, then the grokking and the lazy-vs-rich studies (each is
    checkpointed when done, so ``--resume`` skips finished studies)."""
    state: dict[str, Any] = {}
    ckpt = run_dir.load_checkpoint()
    if ckpt is not None:
        state = dict(ckpt[1])
    # the image set first, so that an absent opt-in set is one line before anything is trained
    data = image_data(cfg, run_dir.seed) if cfg.lazy_rich or cfg.batch_norm_study else None
    state["control"] = control_study(cfg, run_dir.seed)
    if cfg.grokking and state.get("grokking") is None:
        state["grokking"] = grokking_study(cfg, run_dir)
        run_dir.save_checkpoint(cfg.grok_steps, state)
    if cfg.lazy_rich and state.get("lazy_rich") is None:
        state["lazy_rich"] = lazy_rich_study(cfg, run_dir, data)
        run_dir.save_checkpoint(cfg.grok_steps + 2 * (cfg.epochs + 1), state)
    if cfg.batch_norm_study and state.get("batch_norm") is None:
        stress = len(cfg.stress_weight_decays) + len(cfg.stress_target_scales)
        step0 = cfg.grok_steps + 1 + (2 + stress) * (cfg.epochs + 1)  # after every lazy/rich/stress row
        state["batch_norm"] = batch_norm_study(cfg, run_dir, step0, data)
        run_dir.save_checkpoint(step0 + 2 * (cfg.vgg_epochs + 1), state)
    return {
        "control": state["control"],
        "grokking": state.get("grokking"),
        "lazy_rich": state.get("lazy_rich"),
        "batch_norm": state.get("batch_norm"),
    }


def dry_run(cfg: RichnessConfig, device: torch.device) -> dict[str, Any]:
    """``--dry-run``: every network the preset trains, at its real sizes (the grokking transformer, the image MLP,
    and the VGG with and without BatchNorm when the studies are on), with its optimizer; one training step of each
    at batch 2 (the transformer's full-batch AdamW step on 2 pairs, the MLP's and VGGs' SGD steps on 2 images of
    ``cfg.dataset``) and one evaluation step (the D_LR pass). Returns the summed trainable parameter count, the
    transformer's loss (``train_loss``) and the per-network counts."""
    ce = torch.nn.functional.cross_entropy
    counts: dict[str, int] = {}
    losses: dict[str, float] = {}

    def step(name: str, model: FeatureClassifier, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> None:
        model.train()
        loss = ce(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        counts[name] = sum(p.numel() for p in model.parameters() if p.requires_grad)
        losses[name] = float(loss.detach())
        measure(model, x, y, batch_size=2, centre_outputs=cfg.centre_outputs)  # the evaluation pass

    if cfg.grokking:
        data = modular_addition(cfg.modulus, train_fraction=cfg.train_fraction, seed=0)
        model = build_grokking_model(cfg).to(device)
        step("grokking", model, build_grokking_optimizer(model, cfg), data.x_train[:2].to(device),
             data.y_train[:2].to(device))  # fmt: skip
    if cfg.lazy_rich or cfg.batch_norm_study:
        img = load_image_tensors(cfg.dataset, n_train=20, n_test=10, seed=0, scale="standardize")
        x, y = img.x_train[:2].to(device), img.y_train[:2].to(device)
        if cfg.lazy_rich:
            for regime in ("lazy", "rich"):
                mlp = build_image_model(cfg, x[0].numel(), img.num_classes, regime).to(device)
                step(regime, mlp, build_image_optimizer(mlp, cfg), x.flatten(1), y)
        if cfg.batch_norm_study:
            for bn in (False, True):
                vgg = build_vgg(cfg, img.channels, img.num_classes, batch_norm=bn).to(device)
                opt = torch.optim.SGD(vgg.parameters(), lr=cfg.vgg_lr, momentum=0.9)
                step(f"vgg-{'bn' if bn else 'no-bn'}", vgg, opt, x, y)
    first = next(iter(losses.values()), math.nan)
    return {
        "parameters": sum(counts.values()),
        "train_loss": losses.get("grokking", first),
        "parameters_per_network": counts,
        "train_loss_per_network": losses,
    }
