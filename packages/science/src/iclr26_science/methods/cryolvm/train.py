"""``cryolvm`` run: JEPA pre-training, fine-tuning variants, held-out evaluation against classical baselines.

Data (all offline, ``MDAnalysisTests``): training pairs from ``train_frames`` frames of the adenylate-kinase
closed → open MD trajectory, validation pairs from ``val_frames`` frames between them, held-out pairs from
other proteins (``test_structures``); the unlabelled pre-training corpus is the *inputs* of the training
frames and of ``pretrain_structures`` (never a test structure). Inputs/targets: :mod:`iclr26_science.cryoem.pairs`.

Phases (each checkpointed, so ``--resume`` skips finished ones):

1. ``pretrain`` — JEPA3D on random ``crop³`` crops of the corpus (AdamW, EMA momentum 0.996 → 1).
2. ``finetune`` — variants on the same crop sequence and step budget: ``cryolvm`` (pre-trained encoder,
   ``α·MSE + (1−α)·L_Hist``), ``scratch`` (same init, no pre-training), ``cryolvm-mse`` (pre-trained,
   α = 1). Every ``eval_every`` steps the validation CC and MSE are recorded (the convergence curves), and
   the CC on fixed crops of the held-out structures (``test_cc``: the curve the histogram-term claim
   scores, since α and the bins were chosen on the validation CC).
3. ``evaluate`` — each variant restores every held-out map by Gaussian-weighted tiled inference; FSC-0.5 and
   FSC-0.143 resolution against the molmap target, CC_box and CC_mask, the radial-amplitude deviation and
   relative B factor (sharpening-sensitive; FSC is blind to an isotropic filter), next to the input map, global
   B-factor sharpening and LocScale-like local scaling (both sharpen towards the training targets' falloff).
   The controlled check repeats the CC_mask comparison on training structures (in-distribution).

Training goes through :mod:`iclr26_shared.distributed`: under ``torchrun`` each rank takes its share of every
batch and DDP averages the gradients, so the run is the single-process one up to float summation order.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclr26_science.cryoem import (
    Degradation,
    Pair,
    SCUNet3D,
    WienerFilter,
    amplitude_deviation,
    atom_mask,
    cc,
    ema_momentum,
    fsc,
    fsc_resolution,
    global_sharpen,
    guinier_bfactor,
    local_scale,
    make_pair,
    radial_amplitude,
    random_crops,
    relative_bfactor,
    restoration_loss,
    sample_masks,
    tiled_inference,
    token_spread,
)
from iclr26_science.methods.cryolvm.config import CryoLVMConfig
from iclr26_science.methods.cryolvm.model import build_jepa, build_unet, copy_encoder
from iclr26_shared.data import load_dataset
from iclr26_shared.distributed import DistContext
from iclr26_shared.runs import RunDir

__all__ = ["Data", "build_data", "dry_run", "evaluate_map", "run"]

BASELINES = ("input", "global-sharpen", "local-scale")
#: Reported, never a claim's reference: ``wiener`` is the MSE-optimal isotropic linear filter fitted on the training
#: pairs (:class:`~iclr26_science.cryoem.WienerFilter`), what an MSE objective rewards without any network.
DIAGNOSTICS = ("wiener",)


@dataclass
class Data:
    """The pairs of a run."""

    train: list[Pair]
    val: list[Pair]
    test: list[Pair]
    pretrain: list[Pair]


def degradation(cfg: CryoLVMConfig) -> Degradation:
    """The input model of the configured task."""
    return Degradation(
        task=cfg.task, resolution=cfg.resolution, low_resolution=cfg.low_resolution,
        bfactor=(cfg.bfactor_min, cfg.bfactor_max), snr=cfg.snr, noise=cfg.noise, tilt_max=cfg.tilt_max,
    )  # fmt: skip


def build_data(cfg: CryoLVMConfig) -> Data:
    """Training/validation pairs from ADK frames, held-out pairs from other proteins, pre-training corpus."""
    rng = np.random.default_rng(cfg.data_seed)
    deg = degradation(cfg)
    total = cfg.train_frames + cfg.val_frames
    frames = load_dataset("adk-trajectory", count=total)
    val_idx = set(np.linspace(0, total - 1, cfg.val_frames + 2)[1:-1].round().astype(int).tolist())

    def pair(atoms: Any) -> Pair:
        return make_pair(atoms, deg, cfg.apix, rng, multiple=8, min_edge=cfg.crop)

    train = [pair(a) for i, a in enumerate(frames) if i not in val_idx]
    val = [pair(a) for i, a in enumerate(frames) if i in val_idx]
    test = [pair(load_dataset("mdanalysis-structures", name_or_path=s)) for s in cfg.test_structures]
    extra = [pair(load_dataset("mdanalysis-structures", name_or_path=s)) for s in cfg.pretrain_structures]
    corpus = [dataclasses.replace(p, y=p.x) for p in train + extra]  # unlabelled: the inputs only
    return Data(train, val, test, corpus)


def _predict(net: SCUNet3D, x: np.ndarray, cfg: CryoLVMConfig, device: torch.device) -> np.ndarray:
    net.eval()
    vol = torch.from_numpy(x)[None].to(device)
    out = tiled_inference(net, vol, cfg.crop, cfg.tile_stride, weighting=cfg.fusion)
    return out[0].float().cpu().numpy()


def _spectrum(pred: np.ndarray, p: Pair, cfg: CryoLVMConfig) -> tuple[float, float]:
    """Amplitude deviation and relative B factor against the target (NaN when the box has < 2 shells in the band)."""
    kw = {"resolution": cfg.resolution, "low": cfg.amplitude_low}
    try:
        return amplitude_deviation(pred, p.y, cfg.apix, **kw), relative_bfactor(pred, p.y, cfg.apix, **kw)
    except ValueError:
        return float("nan"), float("nan")


def evaluate_map(pred: np.ndarray, p: Pair, cfg: CryoLVMConfig) -> dict[str, float]:
    """FSC-0.5 / FSC-0.143 resolution (Å) against the molmap target, CC_box and CC_mask, and the two
    sharpening-sensitive spectrum metrics (``amp_dev``: :func:`~iclr26_science.cryoem.amplitude_deviation`,
    ``delta_b``: :func:`~iclr26_science.cryoem.relative_bfactor`; shells from ``amplitude_low`` to the
    target resolution)."""
    freqs, curve = fsc(pred, p.y, cfg.apix)
    mask = atom_mask(p.atoms, p.y.shape, cfg.apix, p.raw.origin, cfg.mask_radius)
    amp_dev, delta_b = _spectrum(pred, p, cfg)
    return {
        "fsc05": fsc_resolution(freqs, curve, 0.5), "fsc0143": fsc_resolution(freqs, curve, 0.143),
        "cc_box": cc(pred, p.y), "cc_mask": cc(pred, p.y, mask), "amp_dev": amp_dev, "delta_b": delta_b,
    }  # fmt: skip


def _input_resolution(cfg: CryoLVMConfig) -> float:
    return cfg.low_resolution if cfg.task == "super-resolution" else cfg.resolution


def baselines(data: Data, cfg: CryoLVMConfig, pairs: list[Pair]) -> dict[str, dict[str, dict[str, float]]]:
    """Input map, global B-factor sharpening and LocScale-like scaling on ``pairs`` (structure → method → metrics).
    Both sharpeners aim at the training targets: their mean Guinier B, their mean local amplitude profile. Also
    the diagnostic ``wiener`` row: the per-band least-squares linear filter fitted on the training pairs."""
    res = _input_resolution(cfg)
    b_ref = float(np.mean([guinier_bfactor(p.y, cfg.apix, res) for p in data.train]))
    win = cfg.local_window
    crops, _ = random_crops([dataclasses.replace(p, x=p.y) for p in data.train], win, 32, np.random.default_rng(0))
    profile = np.mean([radial_amplitude(c[0], cfg.apix)[1] for c in crops], axis=0)
    wiener = WienerFilter.fit([p.x for p in data.train], [p.y for p in data.train], cfg.apix)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for p in pairs:
        out[p.name] = {
            "input": evaluate_map(p.x, p, cfg),
            "global-sharpen": evaluate_map(global_sharpen(p.x, cfg.apix, res, b_target=b_ref), p, cfg),
            "local-scale": evaluate_map(local_scale(p.x, cfg.apix, res, profile, window=win), p, cfg),
            "wiener": evaluate_map(wiener(p.x), p, cfg),
        }
    return out


def _share(dist: DistContext, x: np.ndarray, y: np.ndarray, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    idx = dist.shard(list(range(len(x))), what="batch_size")
    return torch.from_numpy(x[idx]).to(device), torch.from_numpy(y[idx]).to(device)


def pretrain(data: Data, cfg: CryoLVMConfig, init: SCUNet3D, run: RunDir, seed: int) -> tuple[SCUNet3D, list[float]]:
    """JEPA pre-training; returns the pre-trained backbone and the loss per step."""
    device = torch.device(run.device)
    backbone = build_unet(cfg).to(device)
    backbone.load_state_dict(init.state_dict())
    jepa = build_jepa(cfg, backbone).to(device)
    net = run.dist.wrap(jepa)
    opt = torch.optim.AdamW(jepa.online_parameters(), lr=cfg.pretrain_lr, weight_decay=cfg.weight_decay)
    rng = np.random.default_rng(seed * 7919 + 11)
    losses: list[float] = []
    with run.progress(cfg.pretrain_steps, "cryolvm pretrain") as bar:
        for step in range(cfg.pretrain_steps):
            x, _ = random_crops(data.pretrain, cfg.crop, cfg.batch_size, rng, min_target=0.5)
            ctx, tgt = sample_masks(jepa.grid, rng, targets=cfg.jepa_targets)
            xb, _ = _share(run.dist, x, x, device)
            jepa.train()
            loss = net(xb, ctx.to(device), tgt.to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            jepa.update_target(ema_momentum(step + 1, cfg.pretrain_steps, cfg.ema_start))
            value = run.dist.mean({"loss": float(loss.detach())})["loss"]
            losses.append(value)
            if step % 10 == 0 or step == cfg.pretrain_steps - 1:
                run.log(step, **{"pretrain/loss": value})
            bar.advance(loss=value)
    return jepa.backbone, losses


def _val_metrics(net: SCUNet3D, vx: torch.Tensor, vy: torch.Tensor) -> tuple[float, float]:
    net.eval()
    with torch.no_grad():
        pred = net(vx)
    ccs = [cc(a[0].cpu().numpy(), b[0].cpu().numpy()) for a, b in zip(pred, vy, strict=True)]
    return float(np.mean(ccs)), float(torch.mean((pred - vy) ** 2))


def finetune(
    data: Data,
    cfg: CryoLVMConfig,
    init: SCUNet3D,
    encoder: SCUNet3D | None,
    alpha: float,
    run: RunDir,
    seed: int,
    name: str,
) -> tuple[SCUNet3D, dict[str, list[Any]]]:
    """Fine-tune from ``init`` (with ``encoder``'s weights when given); returns the net and its curves."""
    device = torch.device(run.device)
    net = build_unet(cfg).to(device)
    net.load_state_dict(init.state_dict())
    if encoder is not None:
        copy_encoder(encoder, net)
    model = run.dist.wrap(net)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.finetune_lr, weight_decay=cfg.weight_decay)
    rng = np.random.default_rng(seed * 7919 + 23)  # the same crop sequence for every variant
    vx_np, vy_np = random_crops(data.val, cfg.crop, cfg.val_crops, np.random.default_rng(cfg.data_seed + 5))
    vx, vy = torch.from_numpy(vx_np).to(device), torch.from_numpy(vy_np).to(device)
    # the curve the histogram-term claim scores: held-out crops (alpha and the bins were chosen on val_cc)
    tx_np, ty_np = random_crops(data.test, cfg.crop, cfg.val_crops, np.random.default_rng(cfg.data_seed + 6))
    tx, ty = torch.from_numpy(tx_np).to(device), torch.from_numpy(ty_np).to(device)
    curves: dict[str, list[Any]] = {"step": [], "val_cc": [], "val_mse": [], "test_cc": [], "train_loss": []}
    window: list[float] = []

    def record(step: int) -> None:
        c, m = _val_metrics(net, vx, vy)
        held_out, _ = _val_metrics(net, tx, ty)
        curves["step"].append(step)
        curves["val_cc"].append(c)
        curves["val_mse"].append(m)
        curves["test_cc"].append(held_out)
        curves["train_loss"].append(float(np.mean(window)) if window else None)
        window.clear()
        run.log(step, **{f"{name}/val_cc": c, f"{name}/val_mse": m, f"{name}/test_cc": held_out})

    record(0)
    with run.progress(cfg.finetune_steps, f"cryolvm finetune {name}") as bar:
        for step in range(1, cfg.finetune_steps + 1):
            x, y = random_crops(data.train, cfg.crop, cfg.batch_size, rng)
            xb, yb = _share(run.dist, x, y, device)
            net.train()
            loss = restoration_loss(model(xb), yb, alpha, cfg.hist_bins)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            last = run.dist.mean({"loss": float(loss.detach())})["loss"]
            window.append(last)
            if step % cfg.eval_every == 0 or step == cfg.finetune_steps:
                record(step)
            bar.advance(loss=last)
    return net, curves


_METRICS = ("fsc05", "fsc0143", "cc_box", "cc_mask", "amp_dev", "delta_b")


def _mean_rows(rows: dict[str, dict[str, dict[str, float]]], method: str) -> dict[str, float]:
    """Mean of each metric over the structures (a metric that some row lacks, from a run checkpointed before
    it existed, is left out)."""
    vals = [r[method] for r in rows.values() if method in r]
    return {k: float(np.mean([v[k] for v in vals])) for k in _METRICS if all(k in v for v in vals)}


def variants(cfg: CryoLVMConfig) -> list[tuple[str, bool, float]]:
    """``(name, pre-trained?, α)`` of the fine-tuning runs."""
    out = [("cryolvm" if cfg.pretrain_steps else "scratch", cfg.pretrain_steps > 0, cfg.alpha)]
    if cfg.pretrain_steps and cfg.compare_scratch:
        out.append(("scratch", False, cfg.alpha))
    if cfg.compare_mse and cfg.alpha < 1:
        out.append(("cryolvm-mse" if cfg.pretrain_steps else "scratch-mse", cfg.pretrain_steps > 0, 1.0))
    return out


def run(cfg: CryoLVMConfig, run: RunDir) -> dict[str, Any]:
    """Pre-train, fine-tune the variants, evaluate; returns the results (per-structure tables, means, curves)."""
    torch.manual_seed(run.seed)
    data = build_data(cfg)
    init = build_unet(cfg)  # one initialisation shared by every variant
    control_pairs = data.train[:: max(1, len(data.train) // 3)][:3]
    ckpt = run.load_checkpoint()
    state: dict[str, Any] = {"done": []} if ckpt is None else ckpt[1]
    if "init" in state:
        init.load_state_dict(state["init"])
    else:
        state["init"] = {k: v.detach().clone() for k, v in init.state_dict().items()}
    if "baselines" not in state:
        state["baselines"] = baselines(data, cfg, data.test)
        state["control_baselines"] = baselines(data, cfg, control_pairs)
        run.save_checkpoint(0, state)
    encoder: SCUNet3D | None = None
    if cfg.pretrain_steps:
        encoder = build_unet(cfg)
        if "encoder" in state:
            encoder.load_state_dict(state["encoder"])
        else:
            encoder, losses = pretrain(data, cfg, init, run, run.seed)
            state["encoder"] = {k: v.detach().cpu().clone() for k, v in encoder.state_dict().items()}
            state["pretrain_loss"] = losses
            probe, _ = random_crops(data.pretrain, cfg.crop, 16, np.random.default_rng(0), min_target=0.5)
            probe_t = torch.from_numpy(probe)
            state["token_spread"] = {
                "init": token_spread(init, probe_t),
                "pretrained": token_spread(encoder.cpu(), probe_t),
            }
            run.save_checkpoint(1, state)
        encoder = encoder.cpu()
    for k, (name, pretrained, alpha) in enumerate(variants(cfg)):
        if name in state["done"]:
            continue
        net, curves = finetune(data, cfg, init, encoder if pretrained else None, alpha, run, run.seed, name)
        device = torch.device(run.device)
        state.setdefault("curves", {})[name] = curves
        state.setdefault("test", {})[name] = {
            p.name: evaluate_map(_predict(net, p.x, cfg, device), p, cfg) for p in data.test
        }
        state.setdefault("control", {})[name] = {
            p.name: evaluate_map(_predict(net, p.x, cfg, device), p, cfg) for p in control_pairs
        }
        state["done"].append(name)
        if k == 0:  # the paper's method: reusable with iclr26_science.cryoem.restore(map, load_model(run))
            run.save_model(name, net.cpu(), extra={"input": "[B, 1, D, H, W] (edges divisible by 2^L), scale_positive",
                                                   "apix": cfg.apix, "task": cfg.task})  # fmt: skip
        run.save_checkpoint(2 + k, state)
    return _results(cfg, state, data, run)


def _results(cfg: CryoLVMConfig, state: dict[str, Any], data: Data, run: RunDir) -> dict[str, Any]:
    rows: dict[str, dict[str, dict[str, float]]] = {s: dict(m) for s, m in state["baselines"].items()}
    ctl: dict[str, dict[str, dict[str, float]]] = {s: dict(m) for s, m in state["control_baselines"].items()}
    for name in state["done"]:
        for s, metrics in state["test"][name].items():
            rows[s][name] = metrics
        for s, metrics in state["control"][name].items():
            ctl[s][name] = metrics
    # a checkpoint from before the diagnostics existed has no such rows: leave them out
    methods = [m for m in (*BASELINES, *DIAGNOSTICS) if all(m in r for r in rows.values())] + list(state["done"])
    pre = state.get("pretrain_loss", [])
    results: dict[str, Any] = {
        "task": cfg.task,
        "structures": {"train": [p.name for p in data.train], "val": [p.name for p in data.val],
                       "test": [p.name for p in data.test], "pretrain": [p.name for p in data.pretrain]},
        "test": rows,
        "summary": {m: _mean_rows(rows, m) for m in methods},
        "control": {m: _mean_rows(ctl, m) for m in methods},
        "curves": state.get("curves", {}),
        "pretrain": {"steps": len(pre), "loss_first": float(np.mean(pre[:10])) if pre else None,
                     "loss_last": float(np.mean(pre[-10:])) if pre else None,
                     "token_spread": state.get("token_spread")},
        "config": {"cc_margin": cfg.cc_margin, "resolution_margin": cfg.resolution_margin,
                   "control_margin": cfg.control_margin, "alpha": cfg.alpha,
                   "amplitude_margin": cfg.amplitude_margin},
    }  # fmt: skip
    _figures(results, pre, run)
    return results


def _figures(results: dict[str, Any], pretrain_loss: list[float], run: RunDir) -> None:
    from iclr26_shared.plotting import plot_bars, plot_curves

    curves = results["curves"]
    if curves:
        plot_curves(run.figure_path("val_cc"), {n: (c["step"], c["val_cc"]) for n, c in curves.items()},
                    ylabel="validation CC", title="fine-tuning convergence")  # fmt: skip
        if all("test_cc" in c for c in curves.values()):
            plot_curves(run.figure_path("test_cc"), {n: (c["step"], c["test_cc"]) for n, c in curves.items()},
                        ylabel="CC on held-out crops", title="fine-tuning convergence (held-out crops)")  # fmt: skip
    if pretrain_loss:
        plot_curves(run.figure_path("pretrain_loss"), {"JEPA": (list(range(len(pretrain_loss))), pretrain_loss)},
                    ylabel="smooth-L1", title="JEPA pre-training")  # fmt: skip
    plot_bars(run.figure_path("cc_mask"), {m: v["cc_mask"] for m, v in results["summary"].items()},
              ylabel="mean CC_mask (held-out)", title=results["task"])  # fmt: skip


def dry_run(cfg: CryoLVMConfig, device: torch.device) -> dict[str, Any]:
    """The preset's network and optimizer at their real sizes on two training crops of one ADK frame:
    one fine-tuning step (MSE + α·L_Hist) and one evaluation step (tiled inference on a crop) at batch 2."""
    frame = load_dataset("adk-trajectory", count=1)[0]
    p = make_pair(frame, degradation(cfg), cfg.apix, np.random.default_rng(cfg.data_seed), multiple=8,
                  min_edge=cfg.crop)  # fmt: skip
    x, y = random_crops([p], cfg.crop, 2, np.random.default_rng(0))
    xb, yb = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    net = build_unet(cfg).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.finetune_lr, weight_decay=cfg.weight_decay)
    net.train()
    loss = restoration_loss(net(xb), yb, cfg.alpha, cfg.hist_bins)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    val_cc, val_mse = _val_metrics(net, xb, yb)
    return {
        "parameters": sum(q.numel() for q in net.parameters() if q.requires_grad),
        "train_loss": float(loss.detach()),
        "eval_cc": val_cc,
        "eval_mse": val_mse,
        "crop": cfg.crop,
    }
