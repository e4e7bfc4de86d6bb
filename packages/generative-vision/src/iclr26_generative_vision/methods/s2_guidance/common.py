"""Pieces both experiments share: schedules, label dropout, guider settings, timed guided sampling."""

from __future__ import annotations

import time
from typing import Any

import torch
from diffusers import DDIMScheduler, DDPMScheduler

from iclr26_generative_vision.guidance.factory import GuiderSettings, make_guider
from iclr26_generative_vision.guidance.s2 import S2Guidance
from iclr26_generative_vision.guidance.sampler import count_forward_passes, guided_sample
from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig

__all__ = [
    "drop_labels",
    "guider_settings",
    "make_sampling_scheduler",
    "make_training_scheduler",
    "run_guider",
]


def make_training_scheduler(cfg: S2GuidanceConfig) -> DDPMScheduler:
    """The forward process used for training: DDPM, linear betas, ``T = num_train_timesteps``."""
    return DDPMScheduler(num_train_timesteps=cfg.num_train_timesteps, beta_schedule="linear", clip_sample=False)


def make_sampling_scheduler(cfg: S2GuidanceConfig, clip_sample: bool = False) -> DDIMScheduler | DDPMScheduler:
    """A fresh sampling scheduler (``ddim`` with eta = 0, or ancestral ``ddpm``) on the training schedule."""
    if cfg.scheduler == "ddim":
        return DDIMScheduler(
            num_train_timesteps=cfg.num_train_timesteps,
            beta_schedule="linear",
            clip_sample=clip_sample,
            set_alpha_to_one=True,
        )
    return DDPMScheduler(num_train_timesteps=cfg.num_train_timesteps, beta_schedule="linear", clip_sample=clip_sample)


def drop_labels(labels: torch.Tensor, null_label: int, p: float, generator: torch.Generator | None) -> torch.Tensor:
    """Classifier-free dropout: each label becomes ``null_label`` with probability ``p``."""
    drop = torch.rand(labels.shape, generator=generator).to(labels.device) < p
    return torch.where(drop, torch.full_like(labels, null_label), labels)


def guider_settings(cfg: S2GuidanceConfig, guidance_scale: float, seed: int) -> GuiderSettings:
    """The guider settings of ``cfg`` at CFG scale ``guidance_scale``."""
    return GuiderSettings(
        guidance_scale=guidance_scale,
        s2_scale=cfg.s2_scale,
        drop_ratio=cfg.drop_ratio,
        s2_start=cfg.s2_start,
        s2_stop=cfg.s2_stop,
        exclude_blocks=cfg.exclude_blocks,
        naive_n=cfg.naive_n,
        formulation=cfg.formulation,
        fixed_blocks=cfg.fixed_blocks or None,
        seed=seed,
    )


def run_guider(
    name: str,
    denoiser: torch.nn.Module,
    num_blocks: int,
    settings: GuiderSettings,
    cfg: S2GuidanceConfig,
    noise: torch.Tensor,
    labels: torch.Tensor,
    null_label: int,
    *,
    clip_sample: bool = False,
    seed: int = 0,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """Sample with guider ``name``; returns ``(samples, {seconds, seconds_per_step, nfe_per_sample, masks})``."""
    guider = make_guider(name, settings, num_blocks)
    nfe = count_forward_passes(guider, cfg.num_inference_steps)
    if isinstance(guider, S2Guidance):
        guider.reseed(settings.seed)
    scheduler = make_sampling_scheduler(cfg, clip_sample=clip_sample)
    conditions = {"class_labels": (labels, torch.full_like(labels, null_label))}
    gen = torch.Generator(device=noise.device).manual_seed(seed) if cfg.scheduler == "ddpm" else None
    t0 = time.perf_counter()
    out = guided_sample(denoiser, scheduler, guider, noise, conditions, cfg.num_inference_steps, generator=gen)
    seconds = time.perf_counter() - t0
    info: dict[str, Any] = {
        "seconds": seconds,
        "seconds_per_step": seconds / cfg.num_inference_steps,
        "nfe_per_sample": nfe,
    }
    if isinstance(guider, S2Guidance):
        info["distinct_masks"] = len({m for _, m in guider.mask_history})
        info["masks_applied"] = len(guider.mask_history)
    return out, info
