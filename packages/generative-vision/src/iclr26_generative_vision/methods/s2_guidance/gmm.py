"""The Gaussian-mixture toys (paper §4.1, Fig. 2/3): CFG drift vs S², exact and trained denoisers.

For each mixture (1-D: modes at ±4; 2-D: four modes at (±4, ±4)), one class per mode:

1. the exact denoiser (closed form) sampled with the conditional model alone and with CFG, showing how
   CFG moves samples away from the true class-conditional ``N(μ_c, s²I)``;
2. a residual-MLP denoiser trained by us on the mixture (with label dropout), sampled with every guider
   in ``cfg.guiders`` at the same λ.

Each sample set is compared with the truth: exact empirical W₂ to as many true samples (per class, then
averaged), mode shift, spread ratio and the mass outside the true class's 99% region.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import torch

from iclr26_generative_vision.data.gmm import ExactGMMDenoiser, GaussianMixture, toy_mixture
from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig
from iclr26_generative_vision.methods.s2_guidance.model import build_mlp, drop_labels, make_training_scheduler
from iclr26_generative_vision.methods.s2_guidance.sampling import (
    correction_alignment,
    guider_settings,
    run_guider,
    sweep_reuse,
    sweep_settings,
)
from iclr26_generative_vision.metrics.distances import gaussian_mode_stats, wasserstein_empirical
from iclr26_generative_vision.nn.resmlp import ResidualMLPDenoiser
from iclr26_shared.runs import RunDir

__all__ = ["evaluate_samples", "run_gmm", "train_mlp"]

#: Guiders that need blocks to drop (not available for the exact denoiser).
_NEEDS_BLOCKS = ("s2", "naive-s2", "slg", "autoguidance")


def train_mlp(
    gmm: GaussianMixture, cfg: S2GuidanceConfig, device: torch.device, generator: torch.Generator, run: RunDir, tag: str
) -> ResidualMLPDenoiser:
    """Train the ε-prediction MLP on ``gmm`` with classifier-free label dropout (Adam, cosine decay)."""
    model = build_mlp(cfg, gmm.dim, gmm.num_components).to(device)  # pyright: ignore[reportArgumentType]  (diffusers types ModelMixin.to oddly)
    sched = make_training_scheduler(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.gmm_lr)
    lr_sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.gmm_train_steps)
    model.train()
    with run.progress(cfg.gmm_train_steps, f"gmm {tag} mlp") as bar:
        for step in range(1, cfg.gmm_train_steps + 1):
            x0, labels = gmm.sample(cfg.gmm_batch_size, generator)
            x0, labels = x0.float().to(device), labels.to(device)
            labels = drop_labels(labels, model.null_label, cfg.label_dropout, generator)
            t = torch.randint(0, cfg.num_train_timesteps, (cfg.gmm_batch_size,), generator=generator).to(device)
            noise = torch.randn(x0.shape, generator=generator).to(device)
            x_t = sched.add_noise(x0, noise, cast(torch.IntTensor, t))
            loss = torch.nn.functional.mse_loss(model(x_t, t, labels), noise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            lr_sched.step()
            if step % 100 == 0 or step == cfg.gmm_train_steps:
                run.log(step, stage="gmm", **{f"gmm_{tag}_loss": loss.item()})
            bar.advance(loss=loss.item())
    model.eval()
    return model


def evaluate_samples(
    samples: torch.Tensor, labels: torch.Tensor, gmm: GaussianMixture, generator: torch.Generator
) -> dict[str, float]:
    """Per-class W₂ to fresh true samples and mode statistics, averaged over classes."""
    rows: list[dict[str, float]] = []
    samples, labels = samples.detach().cpu().double(), labels.cpu()
    for c in range(gmm.num_components):
        xs = samples[labels == c]
        truth = gmm.sample_class(torch.full((xs.shape[0],), c), generator)
        stats = gaussian_mode_stats(xs, gmm.means[c], float(gmm.stds[c]))
        stats["w2"] = wasserstein_empirical(xs, truth)
        rows.append(stats)
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


def _truth_floor(gmm: GaussianMixture, n: int, generator: torch.Generator) -> float:
    """W₂ between two independent true sample sets of the same size (the noise floor of the metric)."""
    labels = torch.arange(gmm.num_components).repeat_interleave(n)
    return evaluate_samples(gmm.sample_class(labels, generator), labels, gmm, generator)["w2"]


def _class_blind_w2(gmm: GaussianMixture, n: int, seed: int) -> float:
    """W₂ of class-blind samples (the whole mixture, labels ignored) to each class's truth: the chance level
    of the W₂ claims (a sampler that learned nothing about the class)."""
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(gmm.num_components).repeat_interleave(n)
    blind, _ = gmm.sample(labels.shape[0], gen)
    return evaluate_samples(blind, labels, gmm, gen)["w2"]


def run_gmm(cfg: S2GuidanceConfig, run: RunDir) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the toys; returns ``(results, samples for figures)``."""
    device = run.device
    results: dict[str, Any] = {}
    figure_data: dict[str, Any] = {}
    run.restart_stage("gmm")  # no checkpoint: a resumed run recomputes the toys and logs their rows once
    for dim in cfg.gmm_dims:
        tag = f"{dim}d"
        gen = torch.Generator().manual_seed(run.seed * 1000 + dim)
        gmm = toy_mixture(dim, cfg.gmm_spread, cfg.gmm_std)
        k, n = gmm.num_components, cfg.gmm_samples
        labels = torch.arange(k).repeat_interleave(n).to(device)
        noise = torch.randn(k * n, dim, generator=gen).to(device)
        settings = guider_settings(cfg, cfg.gmm_guidance_scale, seed=run.seed)
        eval_gen = torch.Generator().manual_seed(run.seed + 17)
        out: dict[str, Any] = {"truth_w2_floor": _truth_floor(gmm, n, eval_gen), "exact": {}, "mlp": {}}
        figure_data[tag] = {"labels": labels.cpu(), "truth": gmm.sample_class(labels.cpu(), eval_gen)}

        exact = ExactGMMDenoiser(gmm, make_training_scheduler(cfg).alphas_cumprod).to(device)
        for name in [g for g in cfg.guiders if g not in _NEEDS_BLOCKS]:
            xs, info = run_guider(name, exact, 0, settings, cfg, noise.double(), labels, exact.null_label)
            out["exact"][name] = {**evaluate_samples(xs, labels, gmm, eval_gen), **info}
            figure_data[tag][f"exact {name}"] = xs.cpu()

        model = train_mlp(gmm, cfg, device, gen, run, tag)
        run.save_model(
            f"mlp-{tag}", model.eval(), extra={"input": f"x_t [B, {dim}], timestep [B] in 0..T-1, labels [B]"}
        )
        sampled: dict[str, tuple[torch.Tensor, dict[str, Any]]] = {}
        for name in cfg.guiders:
            xs, info = run_guider(
                name,
                model,
                cfg.gmm_depth,
                settings,
                cfg,
                noise.float(),
                labels,
                model.null_label,
                max_batch=cfg.gmm_sample_batch,
            )
            sampled[name] = xs, info
            out["mlp"][name] = {**evaluate_samples(xs, labels, gmm, eval_gen), **info}
            figure_data[tag][f"mlp {name}"] = xs.cpu()
            run.log(0, stage="gmm", **{f"gmm_{tag}_{name}_w2": out["mlp"][name]["w2"]})
        out["w2_unconditional"] = _class_blind_w2(gmm, n, run.seed * 1000 + 29 + dim)
        out["s2_sweep"] = []
        for omega, sweep in sweep_settings(cfg, settings):  # one truth set for every ω: ω = 0 equals CFG
            reuse = sweep_reuse(omega, cfg, sampled)  # ω = 0 is CFG's run, ω = s2_scale the s2 run
            if reuse is None:
                xs, info = run_guider(
                    "s2",
                    model,
                    cfg.gmm_depth,
                    sweep,
                    cfg,
                    noise.float(),
                    labels,
                    model.null_label,
                    max_batch=cfg.gmm_sample_batch,
                )
            else:
                xs, info = sampled[reuse]
            sweep_gen = torch.Generator().manual_seed(run.seed * 1000 + 41 + dim)
            out["s2_sweep"].append({"s2_scale": omega, **evaluate_samples(xs, labels, gmm, sweep_gen), **info})
        align_gen = torch.Generator().manual_seed(run.seed * 1000 + 37 + dim)
        align_labels = torch.arange(k).repeat_interleave(min(n, 256))
        x0 = gmm.sample_class(align_labels, align_gen).float().to(device)
        out["mlp_alignment"] = correction_alignment(
            model,
            cfg.gmm_depth,
            settings,
            cfg,
            x0,
            align_labels.to(device),
            model.null_label,
            run.seed,
            max_batch=cfg.gmm_sample_batch,
        )
        results[tag] = out
    return results, figure_data
