"""``crystal-fourier-transformer`` run: invariance check, data, encoding pretraining, CFT vs plain PE vs e3nn,
zero-shot.

Phases (each checkpointed, so ``--resume`` skips finished ones):

1. ``invariance``: max ``|e_O(g x) − e_O(x)|`` and ``|e_O(x + n) − e_O(x)|`` over every operation of
   ``invariance_groups`` groups (all 230 by default) at random points (claim 1).
2. ``pretrain``: the encoding MLP regresses ``‖PE_G(x₁) − PE_G(x₂)‖`` onto the minimal periodic distance
   from ``x₁`` to the orbit of ``x₂`` (paper §3.2; label-free, on all 230 groups by default).
3. ``cft`` / ``plain`` / ``e3nn``: property training on the seen groups (volume-relaxed EMT energy per
   atom by default, MSE on the standardised target, AdamW + warm-up/cosine, gradient clip), model
   selection on validation MAE, then MAE on the seen-group test set, the held-out groups (zero-shot) and
   the real ASE crystals, and train/inference time. The plain ablation first pretrains its own encoding
   exactly as phase 2 (same seeds, pairs and targets), so it differs from the CFT only in the basis.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from iclr26_science.crystals.basis import SymmetryAdaptedBasis
from iclr26_science.crystals.dataset import (
    CrystalDataset,
    family_crystals,
    generate_crystals,
    graph_batch,
    label_diagnostics,
    orbit_crystals,
    padded_batch,
    real_crystals,
    relax_volumes,
)
from iclr26_science.crystals.encoding import (
    EncodingKind,
    PlaneWaveEncoding,
    SpaceGroupPositionalEncoding,
    orbit_features,
)
from iclr26_science.crystals.groups import space_group_ops
from iclr26_science.crystals.lattices import orbit_distance, random_lattice
from iclr26_science.crystals.model import CrystalFourierTransformer
from iclr26_science.methods.crystal_fourier_transformer.config import CrystalFourierTransformerConfig
from iclr26_science.methods.crystal_fourier_transformer.model import build_cft, build_e3nn
from iclr26_shared.errors import DataError
from iclr26_shared.runs import RunDir

__all__ = ["check_invariance", "dry_run", "pretrain_encoding", "run", "split_dataset"]

PHASES = ("invariance", "pretrain", "cft", "plain", "e3nn")


def check_invariance(groups: list[int], num_basis: int, points: int, seed: int = 0) -> dict[str, Any]:
    """Max deviation of the basis under every operation and under lattice translations, per group."""
    rng = np.random.default_rng(seed)
    per_group: dict[str, float] = {}
    worst_op = worst_trans = 0.0
    build_s = 0.0
    for g in groups:
        t0 = time.perf_counter()
        basis = SymmetryAdaptedBasis(g, num_basis)
        build_s += time.perf_counter() - t0
        x = rng.random((points, 3))
        ref = basis(x)
        scale = max(float(np.abs(ref).max()), 1e-12)
        images = space_group_ops(g).apply(x)  # [G, P, 3]
        err_op = float(np.abs(basis(images.reshape(-1, 3)).reshape(len(images), points, -1) - ref).max()) / scale
        err_tr = float(np.abs(basis(x + rng.integers(-5, 6, size=x.shape)) - ref).max()) / scale
        per_group[str(g)] = max(err_op, err_tr)
        worst_op, worst_trans = max(worst_op, err_op), max(worst_trans, err_tr)
    return {
        "groups_checked": len(groups),
        "max_rel_error_ops": worst_op,
        "max_rel_error_translation": worst_trans,
        "max_rel_error": max(worst_op, worst_trans),
        "basis_load_s": build_s,
        "per_group": per_group,
    }


def split_dataset(data: CrystalDataset, cfg: CrystalFourierTransformerConfig, seed: int) -> dict[str, np.ndarray]:
    """Indices: ``train``/``val``/``test`` among seen (detected) groups, ``holdout`` = held-out groups."""
    groups = data.groups
    hold = np.isin(groups, cfg.holdout)
    seen = np.flatnonzero(~hold)
    rng = np.random.default_rng(seed)
    seen = rng.permutation(seen)
    n_val = max(1, int(round(cfg.val_fraction * len(seen))))
    n_test = max(1, int(round(cfg.test_fraction * len(seen))))
    if len(seen) < n_val + n_test + 1:
        raise DataError(f"only {len(seen)} seen-group crystals: too few to split (raise per_group)")
    if not hold.any():
        raise DataError(f"no generated crystal was detected in the held-out groups {cfg.holdout}")
    return {
        "val": np.sort(seen[:n_val]),
        "test": np.sort(seen[n_val : n_val + n_test]),
        "train": np.sort(seen[n_val + n_test :]),
        "holdout": np.flatnonzero(hold),
    }


def pretrain_encoding(
    encoding: SpaceGroupPositionalEncoding | PlaneWaveEncoding,
    groups: list[int],
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    device: torch.device,
    log: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Orbit-distance pretraining (paper §3.2): ``(‖PE(x₁) − PE(x₂)‖ − d_G(x₁, x₂))²`` with ``d_G`` the
    minimal periodic distance (Å) from ``x₁`` to the orbit of ``x₂`` (:func:`orbit_distance`). Each step
    draws 8 groups, ``batch/8`` pairs per group, a random lattice per pair; half the pairs put ``x₂`` near
    a random image of ``x₁`` so that small distances are learnt too. The plain encoding (ablation) gets
    the same pairs, targets and steps; only its input features are the plain plane waves."""
    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(encoding.parameters(), lr=lr, weight_decay=1e-4)
    per = max(1, batch // 8)
    losses = []
    encoding.train()
    for step in range(steps):
        feats1, feats2, lats, gs, dists = [], [], [], [], []
        for g in rng.choice(groups, size=min(8, len(groups)), replace=False):
            g = int(g)
            ops = space_group_ops(g)
            lattice = np.stack([random_lattice(g, rng) for _ in range(per)])
            x1 = rng.random((per, 3))
            near = rng.random(per) < 0.5
            img = ops.apply(x1)[rng.integers(len(ops), size=per), np.arange(per)]
            x2 = np.where(near[:, None], img + rng.normal(0, 0.03, (per, 3)), rng.random((per, 3)))
            if encoding.kind == "symmetry":
                basis = SymmetryAdaptedBasis(g, encoding.num_basis, normalization=encoding.normalization)
                feats1.append(basis.real_features(x1))
                feats2.append(basis.real_features(x2))
            else:
                for x, out in ((x1, feats1), (x2, feats2)):
                    out.append(orbit_features("plain", encoding.num_basis, torch.as_tensor(x)[None], [g])[0].numpy())
            dists.append(orbit_distance(g, lattice, x1, x2))
            lats.append(lattice)
            gs += [g] * per
        f = torch.as_tensor(np.stack([np.concatenate(feats1), np.concatenate(feats2)], 1), dtype=torch.float32)
        lat = torch.as_tensor(np.concatenate(lats), dtype=torch.float32)
        grp = torch.as_tensor(gs)
        target = torch.as_tensor(np.concatenate(dists), dtype=torch.float32)
        f, lat, grp, target = f.to(device), lat.to(device), grp.to(device), target.to(device)
        emb = encoding(lat, grp, features=f)  # [B, 2, dim]
        pred = (emb[:, 0] - emb[:, 1]).norm(dim=-1)
        loss = ((pred - target) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if log is not None:
            log(step, losses[-1])
    encoding.eval()
    return losses


def _lr_lambda(total: int, warmup_frac: float) -> Callable[[int], float]:
    warm = max(1, int(warmup_frac * total))

    def f(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warm) / max(1, total - warm))))

    return f


def _fit(
    name: str,
    model: nn.Module,
    make_batch: Callable[[np.ndarray], Any],
    targets: torch.Tensor,
    split: dict[str, np.ndarray],
    groups: np.ndarray,
    cfg: CrystalFourierTransformerConfig,
    lr: float,
    run: RunDir,
    log: Callable[..., None],
    seed: int,
    extra_eval: dict[str, Callable[[], tuple[torch.Tensor, torch.Tensor]]],
    families: np.ndarray | None = None,
) -> dict[str, Any]:
    """Train on ``split['train']`` (standardised target), select on val MAE, evaluate every split."""
    device = run.device
    model.to(device)
    y = targets.to(device)
    mean, std = float(targets[split["train"]].mean()), float(targets[split["train"]].std().clamp_min(1e-6))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=cfg.weight_decay)
    per_epoch = math.ceil(len(split["train"]) / cfg.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _lr_lambda(cfg.epochs * per_epoch, cfg.warmup_frac))
    gen = np.random.default_rng(seed)

    def predict(idx: np.ndarray) -> torch.Tensor:
        model.eval()
        out = []
        with torch.no_grad():
            for s in range(0, len(idx), 64):
                out.append(model(make_batch(idx[s : s + 64]).to(device)) * std + mean)
        return torch.cat(out)

    best = (math.inf, None)
    train_time = 0.0
    with run.progress(cfg.epochs, name) as bar:
        for epoch in range(cfg.epochs):
            model.train()
            t0 = time.perf_counter()
            total = 0.0
            order = gen.permutation(split["train"])
            for s in range(0, len(order), cfg.batch_size):
                idx = order[s : s + cfg.batch_size]
                pred = model(make_batch(idx).to(device))
                loss = ((pred - (y[idx] - mean) / std) ** 2).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(params, cfg.grad_clip)
                opt.step()
                sched.step()
                total += float(loss.detach()) * len(idx)
            if device.type == "cuda":
                torch.cuda.synchronize()
            train_time += time.perf_counter() - t0
            val_mae = float((predict(split["val"]) - y[split["val"]]).abs().mean())
            if val_mae < best[0]:
                best = (val_mae, {k: v.detach().clone() for k, v in model.state_dict().items()})
            train_loss = total / len(split["train"])
            log(**{"epoch": epoch, f"{name}/train_loss": train_loss, f"{name}/val_mae": val_mae})
            bar.advance(1, loss=train_loss, val_mae=val_mae)
    if best[1] is not None:
        model.load_state_dict(best[1])
    if isinstance(model, CrystalFourierTransformer):  # predict() then gives eV/atom
        model.set_target_scale(mean, std)
    result: dict[str, Any] = {"best_val_mae": best[0], "train_s_per_epoch": train_time / cfg.epochs}
    for part in ("test", "holdout", "train"):
        idx = split[part]
        err = (predict(idx) - y[idx]).abs().cpu().numpy()
        result[f"{part}_mae"] = float(err.mean())
        if part == "holdout":
            result["holdout_mae_per_group"] = {
                str(g): float(err[groups[idx] == g].mean()) for g in np.unique(groups[idx])
            }
            if families is not None:
                result["holdout_mae_per_family"] = {
                    str(f): float(err[families[idx] == f].mean()) for f in np.unique(families[idx])
                }
    t0 = time.perf_counter()
    predict(split["test"])
    if device.type == "cuda":
        torch.cuda.synchronize()
    result["inference_structures_per_s"] = len(split["test"]) / max(time.perf_counter() - t0, 1e-9)
    for key, fn in extra_eval.items():
        pred, true = fn()
        result[f"{key}_mae"] = float((pred * std + mean - true.to(pred.device)).abs().mean())
    result["num_params"] = sum(p.numel() for p in model.parameters())
    return result


def _load_data(cfg: CrystalFourierTransformerConfig) -> CrystalDataset:
    if cfg.generator == "prototypes":
        return family_crystals(
            cfg.families, cfg.per_family, seed=cfg.data_seed, elements=cfg.elements, relax=cfg.label == "emt-relaxed",
            fmax=cfg.relax_fmax, max_atoms=cfg.max_atoms, max_energy=cfg.max_energy, cell_filter=cfg.relax_cell_filter,
        )  # fmt: skip
    gen = generate_crystals if cfg.generator == "pyxtal" else orbit_crystals
    return gen(cfg.groups, cfg.per_group, seed=cfg.data_seed, elements=cfg.elements, max_atoms=cfg.max_atoms,
               max_energy=cfg.max_energy)  # fmt: skip


def run(cfg: CrystalFourierTransformerConfig, run: RunDir) -> dict[str, Any]:  # noqa: C901 - one block per phase
    """Run every phase (see module docstring); returns the results dict."""
    device = run.device
    results: dict[str, Any] = {}
    encoder_state: dict[str, torch.Tensor] | None = None
    done = 0
    step = [0]  # one global, increasing metrics step, so a resume trims metrics.jsonl correctly
    ckpt = run.load_checkpoint()
    if ckpt is not None:
        step[0], state = ckpt
        step[0] += 1
        done = int(state["phase"])
        results = json.loads(state["results"])
        encoder_state = state.get("encoder") or None

    def log(**metrics: float) -> None:
        run.log(step[0], **metrics)
        step[0] += 1

    def save(phase: int) -> None:
        state = {"phase": phase, "results": json.dumps(results), "encoder": encoder_state or {}}
        run.save_checkpoint(step[0], state)
        step[0] += 1

    torch.manual_seed(run.seed)
    # 1. invariance of the basis for (a sample of) all groups
    if done < 1:
        groups = np.unique(np.linspace(1, 230, cfg.invariance_groups).round().astype(int)).tolist()
        results["invariance"] = check_invariance(groups, cfg.num_basis, cfg.invariance_points, seed=run.seed)
        log(invariance_max_rel_error=results["invariance"]["max_rel_error"])
        save(1)

    t0 = time.perf_counter()
    data = _load_data(cfg)
    real = real_crystals(tuple(e for e in cfg.elements))
    unrelaxed = label_diagnostics(data) if cfg.generator != "prototypes" else None
    if cfg.label == "emt-relaxed":
        if cfg.generator != "prototypes":  # the prototype data were relaxed under symmetry when generated
            data = relax_volumes(data)
        real = relax_volumes(real)
    split = split_dataset(data, cfg, seed=run.seed)
    results["data"] = {
        "generator": cfg.generator,
        "label": cfg.label,
        "label_diagnostics": label_diagnostics(data),
        "unrelaxed_emt_diagnostics": unrelaxed,
        "num_crystals": len(data),
        "num_real": len(real),
        "split_sizes": {k: int(len(v)) for k, v in split.items()},
        "detected_groups": sorted({int(g) for g in data.groups}),
        "holdout_detected_groups": sorted({int(g) for g in data.groups[split["holdout"]]}),
        "families": None if data.families is None else sorted({str(f) for f in data.families}),
        "holdout_families": None
        if data.families is None
        else sorted({str(f) for f in data.families[split["holdout"]]}),
        "train_families": None if data.families is None else sorted({str(f) for f in data.families[split["train"]]}),
        "target_mean": float(data.targets.mean()),
        "target_std": float(data.targets.std()),
        "load_s": time.perf_counter() - t0,
    }
    train_mean = float(data.targets[split["train"]].mean())
    mean_predictor: dict[str, Any] = {
        f"{part}_mae": float(np.abs(data.targets[split[part]] - train_mean).mean()) for part in ("test", "holdout")
    }
    if data.families is not None:  # no-skill level per held-out family
        hold = split["holdout"]
        mean_predictor["holdout_mae_per_family"] = {
            str(f): float(np.abs(data.targets[hold][data.families[hold] == f] - train_mean).mean())
            for f in np.unique(data.families[hold])
        }
    results["mean_predictor"] = mean_predictor
    targets = torch.as_tensor(data.targets, dtype=torch.float32)
    real_targets = torch.as_tensor(real.targets, dtype=torch.float32)
    n_max = max(c.num_atoms for c in data.crystals)
    n_real = max(c.num_atoms for c in real.crystals)

    def cft_model(kind: EncodingKind) -> CrystalFourierTransformer:
        return build_cft(cfg, kind)

    pre_groups = list(range(1, 231)) if cfg.pretrain_groups == "all" else sorted({int(g) for g in data.groups})

    def pretrain(kind: EncodingKind) -> tuple[dict[str, torch.Tensor], dict[str, Any] | None]:
        """A fresh model's encoding MLP, pretrained (same seeds, pairs and targets for both kinds)."""
        torch.manual_seed(run.seed + 2)
        model = cft_model(kind)
        stats = None
        if cfg.pretrain_steps:
            model.encoding.to(device)
            t0 = time.perf_counter()
            prefix = "" if kind == "symmetry" else "plain_"
            losses = pretrain_encoding(
                model.encoding, pre_groups, steps=cfg.pretrain_steps, batch=cfg.pretrain_batch,
                lr=cfg.pretrain_lr, seed=run.seed, device=device,
                log=lambda s, v: log(**{f"{prefix}pretrain_step": s, f"{prefix}pretrain_loss": v})
                if s % 10 == 0 else None,
            )  # fmt: skip
            stats = {
                "groups": len(pre_groups), "steps": cfg.pretrain_steps, "first_loss": losses[0],
                "final_loss": float(np.mean(losses[-10:])), "seconds": time.perf_counter() - t0,
            }  # fmt: skip
        return {k: v.detach().cpu() for k, v in model.encoding.state_dict().items()}, stats

    # 2. orbit-distance pretraining of the encoding MLP
    if done < 2:
        encoder_state, stats = pretrain("symmetry")
        if stats is not None:
            results["pretrain"] = stats
        save(2)

    for phase, kind in ((3, "cft"), (4, "plain"), (5, "e3nn")):
        if done >= phase:
            continue
        if (kind == "plain" and not cfg.run_plain) or (kind == "e3nn" and not cfg.run_e3nn):
            save(phase)
            continue
        enc_state = encoder_state
        if kind == "plain":  # the ablation: pretrained and frozen exactly as the CFT's encoding
            enc_state, stats = pretrain("plain")
            if stats is not None:
                results["pretrain_plain"] = stats
        torch.manual_seed(run.seed + phase)  # every phase starts from its own seed: resume is exact
        t0 = time.perf_counter()
        if kind in ("cft", "plain"):
            model = cft_model("symmetry" if kind == "cft" else "plain")
            if enc_state:
                model.encoding.load_state_dict(enc_state)
                if cfg.freeze_encoding and cfg.pretrain_steps:
                    model.encoding.requires_grad_(False)
            feats = model.encoding.features(padded_batch(data, range(len(data)), max_atoms=n_max).frac,
                                            torch.as_tensor(data.groups))  # fmt: skip
            rbatch = padded_batch(real, range(len(real)), max_atoms=n_real)
            real_feats = model.encoding.features(rbatch.frac, rbatch.group)
            prep_s = (time.perf_counter() - t0) / (len(data) + len(real))

            def make(idx: np.ndarray, feats: torch.Tensor = feats) -> Any:
                return padded_batch(data, idx, feats, max_atoms=n_max)

            def real_eval(m: nn.Module = model, rf: torch.Tensor = real_feats) -> tuple[torch.Tensor, torch.Tensor]:
                with torch.no_grad():
                    b = padded_batch(real, range(len(real)), rf, max_atoms=n_real).to(device)
                    return m.eval()(b), real_targets

            res = _fit(
                kind, model, make, targets, split, data.groups, cfg, cfg.lr, run, log, run.seed, {"real": real_eval},
                data.families,
            )  # fmt: skip
        else:
            model = build_e3nn(cfg)
            data.graphs(cfg.e3nn_cutoff)
            real.graphs(cfg.e3nn_cutoff)
            prep_s = (time.perf_counter() - t0) / (len(data) + len(real))

            def make_g(idx: np.ndarray) -> Any:
                return graph_batch(data, idx, cfg.e3nn_cutoff)

            def real_eval_g(m: nn.Module = model) -> tuple[torch.Tensor, torch.Tensor]:
                with torch.no_grad():
                    return m.eval()(graph_batch(real, range(len(real)), cfg.e3nn_cutoff).to(device)), real_targets

            res = _fit(
                kind,
                model,
                make_g,
                targets,
                split,
                data.groups,
                cfg,
                cfg.e3nn_lr,
                run,
                log,
                run.seed,
                {"real": real_eval_g},
                data.families,
            )
        res["preprocess_s_per_structure"] = prep_s
        results[kind] = res
        if kind == "cft":  # the paper's network, reusable: load_model(run).predict([pymatgen Structure, ...])
            run.save_model("cft", model.cpu(), extra={"input": "list of pymatgen Structures (predict)",
                                                      "target": f"{cfg.label} energy, eV/atom"})  # fmt: skip
            model.to(device)
        save(phase)

    _figure(results, run)
    results["config"] = {"zero_shot_ratio": cfg.zero_shot_ratio, "accuracy_ratio": cfg.accuracy_ratio,
                         "mae_margin": cfg.mae_margin, "holdout_groups": list(cfg.holdout)}  # fmt: skip
    return results


def _figure(results: dict[str, Any], run: RunDir) -> None:
    from iclr26_shared.plotting import plot_bars

    models = [k for k in ("cft", "plain", "e3nn") if k in results]
    if not models:
        return
    values = {f"{m} {part}": results[m][f"{part}_mae"] for m in models for part in ("test", "holdout")}
    plot_bars(run.figure_path("mae"), values, ylabel="MAE (eV/atom)", title="seen-group test vs held-out groups")


def dry_run(cfg: CrystalFourierTransformerConfig, device: torch.device) -> dict[str, Any]:
    """The preset's crystal network and optimizer at their real sizes on two real crystals of the preset's
    elements (a few items, instead of the generated families): one training step (MSE on the standardised
    target) and one evaluation step at batch 2."""
    real = real_crystals(tuple(cfg.elements))
    idx = np.arange(min(2, len(real)))
    model = build_cft(cfg, "symmetry").to(device)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr,
                            weight_decay=cfg.weight_decay)  # fmt: skip
    y = torch.as_tensor(real.targets[idx], dtype=torch.float32, device=device)
    z = (y - y.mean()) / y.std().clamp_min(1e-6) if len(idx) > 1 else y * 0
    batch = padded_batch(real, idx).to(device)
    model.train()
    loss = ((model(batch) - z) ** 2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    opt.step()
    model.eval()
    with torch.no_grad():
        ev = float(((model(batch) - z) ** 2).mean())
    return {
        "parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "train_loss": float(loss.detach()),
        "eval_loss": ev,
    }
