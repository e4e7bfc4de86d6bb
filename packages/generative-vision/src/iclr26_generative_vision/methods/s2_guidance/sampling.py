"""Timed guided sampling with one named guider, shared by the toy and image experiments (Alg. 1 loop)."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Collection, Iterable, Iterator
from typing import Any, cast

import torch

from iclr26_generative_vision.guidance.factory import GuiderSettings, make_guider
from iclr26_generative_vision.guidance.s2 import S2Guidance
from iclr26_generative_vision.guidance.sampler import count_forward_passes, guided_sample, rowwise_forward
from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig
from iclr26_generative_vision.methods.s2_guidance.model import make_sampling_scheduler, make_training_scheduler

__all__ = ["correction_alignment", "guider_settings", "run_guider", "sweep_reuse", "sweep_settings"]


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
    max_batch: int = 0,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """Sample with guider ``name``; returns ``(samples, {seconds, seconds_per_step, nfe_per_sample, masks})``.
    ``max_batch`` > 0: rows per denoiser forward (the same samples, see ``rowwise_forward``)."""
    guider = make_guider(name, settings, num_blocks)
    nfe = count_forward_passes(guider, cfg.num_inference_steps)
    if isinstance(guider, S2Guidance):
        guider.reseed(settings.seed)
    scheduler = make_sampling_scheduler(cfg, clip_sample=clip_sample)
    conditions = {"class_labels": (labels, torch.full_like(labels, null_label))}
    gen = torch.Generator(device=noise.device).manual_seed(seed) if cfg.scheduler == "ddpm" else None
    t0 = time.perf_counter()
    out = guided_sample(
        denoiser,
        scheduler,
        guider,
        noise,
        conditions,
        cfg.num_inference_steps,
        generator=gen,
        max_batch=max_batch or None,
    )
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


def sweep_settings(
    cfg: S2GuidanceConfig, settings: GuiderSettings, omegas: Iterable[float] | None = None
) -> Iterator[tuple[float, GuiderSettings]]:
    """``(ω, settings at ω)`` for every ω of ``omegas`` (default ``cfg.s2_sweep``; the S² scale only; λ and
    the masks' seed stay)."""
    for omega in cfg.s2_sweep if omegas is None else omegas:
        yield float(omega), dataclasses.replace(settings, s2_scale=float(omega))


def sweep_reuse(omega: float, cfg: S2GuidanceConfig, sampled: Collection[str]) -> str | None:
    """The guider among ``sampled`` (guiders already run on the same noise) whose samples an ω-sweep point
    equals, or ``None`` when the point needs its own sampling run.

    ω = 0 switches S² off at every step (Eq. 4 without its last term), so S² draws exactly CFG's samples
    (``D_u + λ(D_c − D_u)``, the same passes in the same order; bit for bit, tested); ω = ``cfg.s2_scale``
    is the ``s2`` run itself (the same masks: both reseed the mask stream with the same seed).
    """
    if omega == 0.0 and "cfg" in sampled:
        return "cfg"
    if omega == cfg.s2_scale and "s2" in sampled:
        return "s2"
    return None


@torch.no_grad()
def correction_alignment(
    denoiser: torch.nn.Module,
    num_blocks: int,
    settings: GuiderSettings,
    cfg: S2GuidanceConfig,
    x0: torch.Tensor,
    labels: torch.Tensor,
    null_label: int,
    seed: int,
    max_batch: int = 0,
) -> dict[str, Any]:
    """Where S²'s correction points, measured on noised real samples (the cause of ω's sign of effect).

    At every sampling timestep where S² is active, ``x_t`` is drawn from the forward process around the real
    ``x0`` and the guider's own passes give ``D_c``, ``D_u`` and ``D̂_c`` (one random sub-network, Alg. 1).
    Returns the mean per-sample cosine between ``D̂_c − D_c`` and ``D_u − D_c`` and the mean norm ratio
    ``‖D̂_c − D_c‖ / ‖D_u − D_c‖``. A positive cosine means that dropping blocks moves the conditional
    prediction toward the unconditional one, so S²'s term ``−ω(D̂_c − D_c)`` of Eq. 4 pushes along CFG's
    own direction ``D_c − D_u``: it acts like a larger λ rather than a correction of CFG's overshoot.
    """
    # the guider protocol's batches are BlockStates with dynamic fields, as in guided_sample
    guider: Any = make_guider("s2", dataclasses.replace(settings, s2_scale=1.0), num_blocks)  # ω only scales
    guider.reseed(seed)
    sched = make_sampling_scheduler(cfg)
    sched.set_timesteps(cfg.num_inference_steps)
    forward = make_training_scheduler(cfg)
    gen = torch.Generator().manual_seed(seed)
    uncond = torch.full_like(labels, null_label)
    cosines: list[float] = []
    ratios: list[float] = []
    for i, t in enumerate(sched.timesteps):
        guider.set_state(step=i, num_inference_steps=cfg.num_inference_steps, timestep=t)
        if guider.num_conditions < 3:
            continue
        timestep = t.expand(x0.shape[0]).to(x0.device)
        noise = torch.randn(x0.shape, generator=gen, dtype=x0.dtype).to(x0.device)
        x_t = forward.add_noise(x0, noise, cast(torch.IntTensor, timestep))
        preds: list[torch.Tensor] = []
        for state in guider.prepare_inputs({"class_labels": (labels, uncond)}):
            guider.prepare_models(denoiser)
            try:
                preds.append(
                    rowwise_forward(denoiser, max_batch or None, x_t, timestep, class_labels=state.class_labels)
                )
            finally:
                guider.cleanup_models(denoiser)
        d_c, d_u, d_skip = (p.flatten(1).double() for p in preds[:3])
        drop, cfg_dir = d_skip - d_c, d_u - d_c
        cosines.append(float(torch.nn.functional.cosine_similarity(drop, cfg_dir, dim=1, eps=1e-12).mean()))
        ratios.append(float((drop.norm(dim=1) / cfg_dir.norm(dim=1).clamp_min(1e-12)).mean()))
    if not cosines:
        return {"cosine": math.nan, "norm_ratio": math.nan, "steps": 0, "cosine_per_step": []}
    return {
        "cosine": sum(cosines) / len(cosines),
        "norm_ratio": sum(ratios) / len(ratios),
        "steps": len(cosines),
        "cosine_per_step": cosines,
    }
