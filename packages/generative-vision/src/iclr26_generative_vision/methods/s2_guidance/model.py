"""The denoisers S²-Guidance is applied to and their diffusion process (paper §4: DiT-style transformers).

The blocks themselves live in the domain's ``nn/`` (``ClassConditionalDiT`` from diffusers' own DiT
blocks, ``ResidualMLPDenoiser`` for the toys); this module builds them from the config and gives the
training forward process (DDPM, linear betas), the sampling schedulers and classifier-free label dropout.
"""

from __future__ import annotations

import torch
from diffusers.schedulers.scheduling_ddim import DDIMScheduler
from diffusers.schedulers.scheduling_ddpm import DDPMScheduler

from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig
from iclr26_generative_vision.nn.dit import ClassConditionalDiT
from iclr26_generative_vision.nn.resmlp import ResidualMLPDenoiser
from iclr26_shared.images import ImageTensors

__all__ = [
    "build_dit",
    "build_mlp",
    "drop_labels",
    "make_sampling_scheduler",
    "make_training_scheduler",
]


def build_dit(cfg: S2GuidanceConfig, data: ImageTensors) -> ClassConditionalDiT:
    """The class-conditional DiT of ``cfg`` for ``data``'s (square) image shape."""
    return ClassConditionalDiT(
        data.size,
        data.channels,
        data.num_classes,
        cfg.patch_size,
        cfg.dit_hidden,
        cfg.dit_depth,
        cfg.dit_heads,
        activation=cfg.dit_activation,
    )


def build_mlp(cfg: S2GuidanceConfig, dim: int, num_classes: int) -> ResidualMLPDenoiser:
    """The residual-MLP ε-denoiser of the Gaussian-mixture toys (``gmm_depth`` skippable blocks)."""
    return ResidualMLPDenoiser(dim, num_classes, cfg.gmm_hidden, cfg.gmm_depth)


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
