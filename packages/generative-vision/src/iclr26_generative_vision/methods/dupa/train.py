"""``run(cfg, run_dir)`` of ``dupa``: DDT vs DDT + dual paths vs DDT + DUPA at equal steps, on real images.

1. Data and evaluation come from the S²-Guidance method: ``load_images`` (digits / mnist-5k offline,
   fashion-mnist opt-in, scaled to [−1, 1]) and the in-repo CNN whose penultimate features give an
   FID-*style* Fréchet distance (FD, not Inception FID) and whose logits give class accuracy.
2. Every variant (``ddt``: K = 1, λ = 0; ``dual-path``: K paths, λ = 0; ``dupa``: K paths, λ = 0.5;
   optional ``ddt-2x-batch``: K = 1 on K× the images) starts from the *same* DDT initialisation and is
   trained in lock-step on the *same* images and labels; each variant's path generator has the same seed,
   so the baseline's single path is the first path of the dual-path variants. AdamW (0.9, 0.95), linear
   warmup then a constant learning rate (as DDT/DUPA), EMA weights for sampling.
3. Every ``eval_every`` steps each variant's EMA is sampled (Euler, no sharing) and scored: the FD-vs-step
   curves of claims 1–2. At the end: the final FD / accuracy with ``samples_per_class``, the same with CFG
   (reported), the encoder-sharing curve of DUPA (FD, seconds and block evaluations per refresh rate; claim
   3), and the controlled check: on held-out images, the cosine of the projected conditions of two paths of
   the same image vs two different images (alignment learned, no collapse).

Under ``torchrun`` (:mod:`iclr26_shared.distributed`) each rank trains on its share of the images of every
global batch (all K paths of an image stay on one rank, so the alignment pairs are intact); DDP averages
the gradients of the equal shares, which is the global batch's gradient. Evaluation runs on every rank;
rank 0 writes.
"""

from __future__ import annotations

import copy
import json
import logging
import math
from typing import Any

import torch

from iclr26_generative_vision.flow.dupa import PathBatch, draw_paths
from iclr26_generative_vision.flow.sampler import euler_sample
from iclr26_generative_vision.methods.dupa.config import DUPAConfig
from iclr26_generative_vision.methods.dupa.model import DUPAObjective, build_ddt, build_objective
from iclr26_generative_vision.methods.s2_guidance.images import load_images
from iclr26_generative_vision.methods.s2_guidance.model import drop_labels
from iclr26_generative_vision.metrics.classifier import SmallCNN, accuracy, features, train_classifier
from iclr26_generative_vision.metrics.distances import frechet_distance
from iclr26_generative_vision.nn.ddt import DDT
from iclr26_shared.distributed import DistContext
from iclr26_shared.images import ImageTensors
from iclr26_shared.runs import RunDir
from iclr26_shared.seeding import get_rng_state, set_rng_state

__all__ = ["dry_run", "other_class_partners", "path_cosines", "run", "shard_paths", "train_variants"]


def _quiet_diffusers() -> None:
    from diffusers.utils import logging as dlogging

    dlogging.set_verbosity_error()
    logging.getLogger("diffusers").setLevel(logging.ERROR)


def shard_paths(paths: PathBatch, num_paths: int, dist: DistContext) -> PathBatch:
    """This rank's images of a path-major batch of ``K·B`` rows: rows ``[k, rank::world]`` of every path
    (identity with one process); every path of an image stays on the same rank."""
    if not dist.distributed:
        return paths
    b = paths.t.shape[0] // num_paths
    mine = torch.as_tensor(dist.shard(torch.arange(b), what="batch_size"), device=paths.t.device)

    def take(v: torch.Tensor) -> torch.Tensor:
        return v.reshape(num_paths, b, *v.shape[1:])[:, mine].reshape(-1, *v.shape[1:])

    return PathBatch(*(take(v) for v in paths))


class _Evaluator:
    """Samples a model with fixed noise and scores the samples with the evaluation classifier."""

    def __init__(self, cfg: DUPAConfig, data: ImageTensors, classifier: SmallCNN, real_feats: Any, run: RunDir):
        self.cfg, self.classifier, self.real_feats, self.device = cfg, classifier, real_feats, run.device
        self.k, self.shape = data.num_classes, (data.channels, data.size, data.size)
        self.seed = run.seed

    def __call__(
        self, model: DDT, per_class: int, *, guidance_scale: float | None = None, refresh_rate: int = 1
    ) -> tuple[dict[str, Any], torch.Tensor]:
        labels = torch.arange(self.k).repeat_interleave(per_class).to(self.device)
        gen = torch.Generator().manual_seed(self.seed + 23)
        noise = torch.randn(labels.shape[0], *self.shape, generator=gen).to(self.device)
        xs, info = euler_sample(
            model,
            noise,
            labels,
            num_steps=self.cfg.num_inference_steps,
            guidance_scale=self.cfg.guidance_scale if guidance_scale is None else guidance_scale,
            cfg_interval=self.cfg.cfg_interval,
            refresh_rate=refresh_rate,
            max_batch=self.cfg.sample_batch or None,
        )
        xs = xs.clamp(-1, 1)
        feats = features(self.classifier, xs).cpu().numpy()
        row = {
            "fd": frechet_distance(feats, self.real_feats),
            "class_accuracy": accuracy(self.classifier, xs, labels),
            "seconds": info["seconds"],
            "block_evals_per_sample": info["block_evals"],
            "samples": int(labels.shape[0]),
        }
        return row, xs.cpu().reshape(self.k, per_class, *self.shape)


def _lr_at(step: int, cfg: DUPAConfig) -> float:
    warmup = max(1, cfg.train_steps // 20)
    return cfg.lr * min(1.0, step / warmup)


def train_variants(
    cfg: DUPAConfig, data: ImageTensors, run: RunDir, evaluate: _Evaluator | None = None
) -> tuple[dict[str, DDT], dict[str, list[dict[str, Any]]], dict[str, DUPAObjective]]:
    """Train every variant in lock-step (resuming from the run's last checkpoint); returns the EMA models,
    the FD curves (one row per evaluation) and the trained objectives (model + projector)."""
    device, dist, seed = run.device, run.dist, run.seed
    torch.manual_seed(seed)
    base = build_ddt(cfg, data)
    objectives: dict[str, DUPAObjective] = {}
    for variant in cfg.variants:
        torch.manual_seed(seed + 1)  # the projector's init (dupa only)
        objectives[variant] = build_objective(cfg, variant, copy.deepcopy(base)).to(device)
    emas = {v: copy.deepcopy(o.model).requires_grad_(False) for v, o in objectives.items()}
    opts = {
        v: torch.optim.AdamW(o.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.0)
        for v, o in objectives.items()
    }
    data_gen = torch.Generator().manual_seed(seed + 101)
    extra_gen = torch.Generator().manual_seed(seed + 103)  # the extra images of ddt-2x-batch
    path_gens = {v: torch.Generator().manual_seed(seed + 107) for v in cfg.variants}
    curves: dict[str, list[dict[str, Any]]] = {v: [] for v in cfg.variants}
    start = 0
    ckpt = run.load_checkpoint()
    if ckpt is not None:
        start, state = ckpt
        for v in cfg.variants:
            objectives[v].load_state_dict(state[f"{v}/objective"])
            emas[v].load_state_dict(state[f"{v}/ema"])
            opts[v].load_state_dict(state[f"{v}/opt"])
            path_gens[v].set_state(state[f"{v}/gen"])
        data_gen.set_state(state["data_gen"])
        extra_gen.set_state(state["extra_gen"])
        set_rng_state(state["rng"])
        curves = json.loads(state["curves"])
    wrapped = {v: dist.wrap(o) for v, o in objectives.items()}
    for o in objectives.values():
        o.train()
    x_train, y_train = data.x_train.to(device), data.y_train.to(device)
    n, null = x_train.shape[0], base.null_label
    with run.progress(cfg.train_steps, "dupa: " + ", ".join(cfg.variants), completed=start) as bar:
        for step in range(start + 1, cfg.train_steps + 1):
            lr = _lr_at(step, cfg)
            idx = torch.randint(0, n, (cfg.batch_size,), generator=data_gen).to(device)
            labels = drop_labels(y_train[idx], null, cfg.label_dropout, data_gen)
            extra: tuple[torch.Tensor, torch.Tensor] | None = None
            if "ddt-2x-batch" in cfg.variants:
                more = torch.randint(0, n, (cfg.batch_size * (cfg.num_paths - 1),), generator=extra_gen).to(device)
                extra = (
                    torch.cat([idx, more]),
                    torch.cat([labels, drop_labels(y_train[more], null, cfg.label_dropout, extra_gen)]),
                )
            row: dict[str, float] = {}
            for v, obj in objectives.items():
                ix, lab = (idx, labels) if v != "ddt-2x-batch" or extra is None else extra
                k = cfg.paths(v)
                paths = draw_paths(
                    x_train[ix], lab, k, path_gens[v], resample=cfg.resample, time_sampling=cfg.time_sampling
                )
                paths = shard_paths(paths, k, dist)
                for group in opts[v].param_groups:
                    group["lr"] = lr
                loss, vel, align = wrapped[v](paths)
                opts[v].zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(obj.parameters(), 1.0)
                opts[v].step()
                decay = min(cfg.ema_decay, (1 + step) / (10 + step))
                with torch.no_grad():
                    for pe, pm in zip(emas[v].parameters(), obj.model.parameters(), strict=True):
                        pe.lerp_(pm, 1 - decay)
                row[f"{v}/loss"], row[f"{v}/velocity_loss"] = loss.item(), vel.item()
                if obj.weight > 0:
                    row[f"{v}/dupa_loss"] = align.item()
            row = dist.mean(row)
            if step % cfg.log_every == 0 or step == cfg.train_steps:
                run.log(step, phase="train", lr=lr, **row)
            if evaluate is not None and (step % cfg.eval_every == 0 or step == cfg.train_steps):
                for v, ema in emas.items():
                    ema.eval()
                    res, _ = evaluate(ema, cfg.eval_samples_per_class)
                    curves[v].append({"step": step, "fd": res["fd"], "class_accuracy": res["class_accuracy"]})
                    run.log(step, phase="eval", variant=v, fd=res["fd"], class_accuracy=res["class_accuracy"])
            shown: dict[str, float | str] = {k: val for k, val in row.items() if k.endswith("/velocity_loss")}
            bar.advance(1, **shown)
            if step % cfg.checkpoint_every == 0 or step == cfg.train_steps:
                state: dict[str, Any] = {
                    "data_gen": data_gen.get_state(),
                    "extra_gen": extra_gen.get_state(),
                    "rng": get_rng_state(),
                    "curves": json.dumps(curves),
                }
                for v in cfg.variants:
                    state[f"{v}/objective"] = objectives[v].state_dict()
                    state[f"{v}/ema"] = emas[v].state_dict()
                    state[f"{v}/opt"] = opts[v].state_dict()
                    state[f"{v}/gen"] = path_gens[v].get_state()
                run.save_checkpoint(step, state)
    for ema in emas.values():
        ema.eval()
    return emas, curves, objectives


def other_class_partners(labels: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """For each image i, a random image j of *another* class (a shuffled order, the first j in it with
    ``labels[j] != labels[i]``); ``[B]`` indices. Raises ValueError when every image has one class."""
    y = labels.cpu()
    if bool((y == y[0]).all()):
        raise ValueError("other-class pairs need at least two classes among the held-out images")
    order = torch.randperm(y.shape[0], generator=generator)
    return torch.tensor([int(next(j for j in order if y[j] != y[i])) for i in range(y.shape[0])])


def _cosine_rows(feats: torch.Tensor, partners: torch.Tensor) -> tuple[float, float]:
    a, b = torch.nn.functional.normalize(feats[0], dim=-1), torch.nn.functional.normalize(feats[1], dim=-1)
    return float((a * b).sum(-1).mean()), float((a * b[partners.to(b.device)]).sum(-1).mean())


@torch.no_grad()
def path_cosines(
    objective: DUPAObjective, x: torch.Tensor, y: torch.Tensor, generator: torch.Generator, *, num_paths: int = 2
) -> dict[str, float]:
    """The collapse metric on clean images ``x`` ``[B, C, S, S]`` (labels ``y``, at least two classes).

    For the aligned layer's tokens ``h`` ``[2, B, N, H]`` of two noisy paths of every image (and their
    projections, when the objective has a projector), **centred**: ``h − mean over paths and images`` per
    token position, so a shared offset (every image mapped near one direction) does not count as
    alignment. Then the mean token cosine between the two paths of the *same* image (``same_*``) and
    between path 1 of image i and path 2 of a random image of *another class* (``other_*``, shuffled
    pairs from :func:`other_class_partners`); ``gap_* = same_* − other_*`` (0: collapsed, nothing
    image-specific left). The uncentred cosines are kept as ``*_uncentred`` for comparison."""
    was = objective.training
    objective.eval()
    paths = draw_paths(x, y, num_paths, generator)
    partners = other_class_partners(y, generator)
    hidden = objective.aligned_tokens(paths.x_t, paths.t, paths.labels)
    h = hidden.reshape(num_paths, x.shape[0], *hidden.shape[1:])
    res: dict[str, float] = {}
    kinds: list[tuple[str, torch.Tensor]] = [("raw", h)]
    if objective.projector is not None:
        kinds.append(("projected", objective.projector(h)))
    for name, feats in kinds:
        res[f"same_{name}_uncentred"], res[f"other_{name}_uncentred"] = _cosine_rows(feats, partners)
        centred = feats - feats.mean(dim=(0, 1), keepdim=True)
        res[f"same_{name}"], res[f"other_{name}"] = _cosine_rows(centred, partners)
        res[f"gap_{name}"] = res[f"same_{name}"] - res[f"other_{name}"]
    objective.train(was)
    return res


def _steps_to_reach(curve: list[dict[str, Any]], level: float) -> int | None:
    return next((r["step"] for r in curve if r["fd"] <= level), None)


def _figures(
    run: RunDir, curves: dict[str, list[dict[str, Any]]], sharing: list[dict[str, Any]], grids: dict[str, torch.Tensor]
) -> None:
    from iclr26_shared.plotting import plot_curves, plot_images

    plot_curves(
        run.figure_path("fd_curve"),
        {v: ([float(r["step"]) for r in rows], [float(r["fd"]) for r in rows]) for v, rows in curves.items()},
        xlabel="training step",
        ylabel="FD (in-repo features) ↓",
        title="FID-style score vs steps",
    )
    if sharing:
        rates = [float(r["refresh_rate"]) for r in sharing]
        plot_curves(
            run.figure_path("encoder_sharing"),
            {
                "FD / FD(k=1)": (rates, [r["fd"] / sharing[0]["fd"] for r in sharing]),
                "time / time(k=1)": (rates, [r["time_ratio"] for r in sharing]),
                "block evals / (k=1)": (rates, [r["block_ratio"] for r in sharing]),
            },
            xlabel="encoder refresh rate k",
            ylabel="ratio to k = 1",
            title="DUPA: encoder sharing",
        )
    for name, grid in grids.items():
        show = grid[:, : min(grid.shape[1], 8)]
        imgs = ((show[:, :, 0].reshape(-1, *show.shape[-2:]) + 1) / 2).clamp(0, 1).numpy()
        plot_images(run.figure_path(f"samples_{name}"), imgs, ncols=show.shape[1], title=f"{name} (rows: classes)")


def run(cfg: DUPAConfig, run_dir: RunDir) -> dict[str, Any]:
    """Train and compare the variants; returns the results (claims are added by the runner)."""
    _quiet_diffusers()
    device, seed = run_dir.device, run_dir.seed
    data = load_images(cfg, seed)
    classifier = train_classifier(
        data.x_train.to(device),
        data.y_train.to(device),
        data.num_classes,
        epochs=cfg.classifier_epochs,
        generator=torch.Generator().manual_seed(seed + 7),
    )
    real_feats = features(classifier, data.x_train.to(device)).cpu().numpy()
    test_feats = features(classifier, data.x_test.to(device)).cpu().numpy()
    blank = torch.randn(200, data.channels, data.size, data.size, generator=torch.Generator().manual_seed(seed + 31))
    results: dict[str, Any] = {
        "dataset": data.name,
        "num_classes": data.num_classes,
        "num_train": int(data.x_train.shape[0]),
        "image_size": data.size,
        "arch": cfg.arch,
        "variants": list(cfg.variants),
        "train_steps": cfg.train_steps,
        "classifier_test_accuracy": accuracy(classifier, data.x_test.to(device), data.y_test.to(device)),
        "fd_test_vs_train": frechet_distance(test_feats, real_feats),
        "fd_noise": frechet_distance(features(classifier, blank.clamp(-1, 1).to(device)).cpu().numpy(), real_feats),
        "chance_accuracy": 1.0 / data.num_classes,
        "world_size": run_dir.dist.world_size,
        "shared_refresh_rate": cfg.shared_refresh_rate,
    }
    evaluate = _Evaluator(cfg, data, classifier, real_feats, run_dir)
    per_class = min(20, max(1, data.x_test.shape[0] // data.num_classes))
    pick = torch.cat([torch.nonzero(data.y_test == c).flatten()[:per_class] for c in range(data.num_classes)])
    x_held, y_held = data.x_test[pick].to(device), data.y_test[pick].to(device)
    torch.manual_seed(seed)  # DUPA's initial weights, exactly as train_variants builds them
    init_model = build_ddt(cfg, data)
    torch.manual_seed(seed + 1)
    init_objective = build_objective(cfg, "dupa", init_model).to(device)
    alignment_init = path_cosines(init_objective, x_held, y_held, torch.Generator().manual_seed(seed + 41))
    del init_model, init_objective
    emas, curves, objectives = train_variants(cfg, data, run_dir, evaluate)
    results["curves"] = curves
    final: dict[str, dict[str, Any]] = {}
    grids: dict[str, torch.Tensor] = {}
    for v, ema in emas.items():
        row, grid = evaluate(ema, cfg.samples_per_class)
        grids[v] = grid
        if cfg.cfg_guidance_scale != 1.0:
            with_cfg, _ = evaluate(ema, cfg.samples_per_class, guidance_scale=cfg.cfg_guidance_scale)
            row["cfg"] = {
                "guidance_scale": cfg.cfg_guidance_scale,
                "fd": with_cfg["fd"],
                "class_accuracy": with_cfg["class_accuracy"],
            }
        final[v] = row
    results["final"] = final
    for v, ema in emas.items():  # the EMA weights that were sampled and scored
        # as a loaded model's: CPU kernels round differently (1 ulp) when the weights do not require grad
        ema.requires_grad_(True)
        run_dir.save_model(v, ema, extra={"weights": "ema", "dataset": data.name})
    # claim 2: steps DUPA needs to reach the baseline's final score (on the same curve evaluation)
    base_final = curves["ddt"][-1]["fd"]
    reach = _steps_to_reach(curves["dupa"], base_final)
    results["convergence"] = {
        "ddt_final_curve_fd": base_final,
        "dupa_steps_to_ddt_final": reach,
        "speedup": (cfg.train_steps / reach) if reach else 0.0,
        "eval_every": cfg.eval_every,
    }
    # claim 3: encoder sharing on DUPA's model
    sharing: list[dict[str, Any]] = []
    for k in sorted(cfg.refresh_rates):
        if k == 1:  # no sharing: the final evaluation's own run (same model, noise and sampler; bit for bit)
            row = {key: val for key, val in final["dupa"].items() if key != "cfg"}
        else:
            row, _ = evaluate(emas["dupa"], cfg.samples_per_class, refresh_rate=k)
        sharing.append({"refresh_rate": k, **row})
    for row in sharing:
        row["time_ratio"] = row["seconds"] / sharing[0]["seconds"]
        row["block_ratio"] = row["block_evals_per_sample"] / sharing[0]["block_evals_per_sample"]
        row["fd_ratio"] = row["fd"] / sharing[0]["fd"]
    results["sharing"] = sharing
    # controlled check (the alignment term is optimised) and the collapse check, on held-out images
    results["alignment_init"] = alignment_init
    results["alignment"] = {
        v: path_cosines(objectives[v], x_held, y_held, torch.Generator().manual_seed(seed + 41)) for v in cfg.variants
    }
    if run_dir.dist.is_main:
        _figures(run_dir, curves, sharing, grids)
    if not all(math.isfinite(r["fd"]) for r in final.values()):
        logging.getLogger(__name__).warning("dupa: a variant's FD is not finite (diverged training?)")
    return results


def dry_run(cfg: DUPAConfig, device: torch.device) -> dict[str, Any]:
    """The DUPA variant at the preset's real sizes (DDT + projector, AdamW) on two of the preset's images:
    one training step of ``L_velocity + λ L_DUPA`` over K paths, then one evaluation (the velocity loss
    of fresh paths and a 2-step Euler sample with CFG); ``{"parameters", "train_loss", "eval_loss"}``."""
    _quiet_diffusers()
    data = load_images(cfg, 0)
    torch.manual_seed(0)
    objective = build_objective(cfg, "dupa", build_ddt(cfg, data)).to(device)
    opt = torch.optim.AdamW(objective.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.0)
    x, y = data.x_train[:2].to(device), data.y_train[:2].to(device)
    gen = torch.Generator().manual_seed(0)
    paths = draw_paths(x, y, cfg.num_paths, gen, resample=cfg.resample, time_sampling=cfg.time_sampling)
    loss, _, _ = objective(paths)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    objective.eval()
    with torch.no_grad():
        _, eval_loss, _ = objective(draw_paths(x, y, cfg.num_paths, gen, time_sampling=cfg.time_sampling))
        noise = torch.randn(x.shape, generator=gen).to(device)
        euler_sample(objective.model, noise, y, num_steps=2, guidance_scale=cfg.cfg_guidance_scale)
    return {
        "parameters": sum(p.numel() for p in objective.parameters() if p.requires_grad),
        "train_loss": float(loss.detach()),
        "eval_loss": float(eval_loss),
    }
