"""Batched, seeded image augmentations: FixMatch's weak and strong views, in torch.

Images enter as ``uint8`` tensors ``[B, H, W]`` (grey) or ``[B, H, W, 3]`` (RGB) and leave as ``float32``
``[B, C, H, W]`` normalised to ``[-1, 1]``. Every random draw comes from the ``torch.Generator`` passed in
(on the CPU), so a view is reproducible from a seed.

* weak: random translation by up to 12.5 % of the side (+ horizontal flip when ``hflip``);
* strong: a RandAugment-like random affine (rotation ±30°, shear ±0.3, scale 0.8–1.2, translation
  ±12.5 %), brightness and contrast jitter, and Cutout of a random square of 25–50 % of the side.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["normalize", "strong_view", "weak_view"]


def normalize(images: Tensor, device: torch.device | str | None = None) -> Tensor:
    """``uint8 [B, H, W(, 3)]`` → ``float32 [B, C, H, W]`` in ``[-1, 1]``."""
    if images.dtype != torch.uint8 or images.ndim not in (3, 4):
        raise ValueError(f"expected uint8 images [B, H, W] or [B, H, W, 3], got {images.dtype} {tuple(images.shape)}")
    x = images.to(device) if device is not None else images
    x = x.unsqueeze(1) if x.ndim == 3 else x.permute(0, 3, 1, 2)
    return x.float().div(127.5).sub(1.0)


def _uniform(n: int, low: float, high: float, gen: torch.Generator) -> Tensor:
    return torch.rand(n, generator=gen) * (high - low) + low


def _affine(
    x: Tensor, gen: torch.Generator, *, rot: float, shear: float, scale: tuple[float, float], translate: float
) -> Tensor:
    """Random per-sample affine warp of ``x`` ``[B, C, H, W]`` (values in [-1, 1]; black fill)."""
    b = x.shape[0]
    angle = _uniform(b, -rot, rot, gen) * (math.pi / 180.0)
    sh = _uniform(b, -shear, shear, gen)
    s = _uniform(b, scale[0], scale[1], gen)
    tx, ty = _uniform(b, -translate, translate, gen) * 2, _uniform(b, -translate, translate, gen) * 2
    cos, sin = torch.cos(angle) / s, torch.sin(angle) / s
    theta = torch.stack([torch.stack([cos, -sin + sh * cos, tx], 1), torch.stack([sin, cos + sh * sin, ty], 1)], 1).to(
        x.device, x.dtype
    )  # [B, 2, 3]
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    # fill with black (-1): warp x + 1 with zero padding, then shift back
    return F.grid_sample(x + 1.0, grid, mode="bilinear", padding_mode="zeros", align_corners=False) - 1.0


def _flip(x: Tensor, gen: torch.Generator) -> Tensor:
    mask = (torch.rand(x.shape[0], generator=gen) < 0.5).to(x.device)
    return torch.where(mask[:, None, None, None], x.flip(-1), x)


def weak_view(
    images: Tensor, gen: torch.Generator, *, hflip: bool = False, device: torch.device | str = "cpu"
) -> Tensor:
    """FixMatch's weak augmentation: random shift (± 12.5 %) and, with ``hflip``, a random flip."""
    x = normalize(images, device)
    x = _affine(x, gen, rot=0.0, shear=0.0, scale=(1.0, 1.0), translate=0.125)
    return _flip(x, gen) if hflip else x


def strong_view(
    images: Tensor, gen: torch.Generator, *, hflip: bool = False, device: torch.device | str = "cpu"
) -> Tensor:
    """FixMatch's strong augmentation (RandAugment-like affine + colour jitter + Cutout)."""
    x = normalize(images, device)
    b, _, h, w = x.shape
    x = _affine(x, gen, rot=30.0, shear=0.3, scale=(0.8, 1.2), translate=0.125)
    if hflip:
        x = _flip(x, gen)
    bright = _uniform(b, -0.3, 0.3, gen).to(x.device)[:, None, None, None]
    contrast = _uniform(b, 0.6, 1.4, gen).to(x.device)[:, None, None, None]
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = ((x - mean) * contrast + mean + bright).clamp(-1.0, 1.0)
    # Cutout: one square of side 25-50 % of min(H, W), filled with grey (0)
    side = (_uniform(b, 0.25, 0.5, gen) * min(h, w)).long().clamp_min(1)
    cy = (torch.rand(b, generator=gen) * h).long()
    cx = (torch.rand(b, generator=gen) * w).long()
    ys = torch.arange(h)[None, :]
    xs = torch.arange(w)[None, :]
    in_y = ((ys - cy[:, None]).abs() <= side[:, None] // 2).to(x.device)  # [B, H]
    in_x = ((xs - cx[:, None]).abs() <= side[:, None] // 2).to(x.device)  # [B, W]
    cut = in_y[:, None, :, None] & in_x[:, None, None, :]
    return x.masked_fill(cut, 0.0)
