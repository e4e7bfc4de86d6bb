"""Timed guided sampling with one named guider, shared by the toy and image experiments (Alg. 1 loop)."""

from __future__ import annotations

import time
from typing import Any

import torch

from iclr26_generative_vision.guidance.factory import GuiderSettings, make_guider
from iclr26_generative_vision.guidance.s2 import S2Guidance
from iclr26_generative_vision.guidance.sampler import count_forward_passes, guided_sample
from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig
from iclr26_generative_vision.methods.s2_guidance.model import make_sampling_scheduler

__all__ = ["guider_settings", "run_guider"]


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
