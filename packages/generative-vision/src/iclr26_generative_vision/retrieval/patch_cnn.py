"""A small patch-descriptor CNN trained in-repo: the offline *learned* local descriptor beside SIFT.

L2-Net/HardNet-style (Tian et al., CVPR 2017; Mishchuk et al., NeurIPS 2017), scaled down: SIFT keypoints
give location, scale and orientation; the image is resampled into an oriented ``32×32`` patch of
``magnification × keypoint size`` pixels, normalised per patch, and a 6-layer CNN maps it to a 128-d unit
descriptor. Training is self-supervised on the training photographs: a random oriented patch and the same
point under a small random similarity (±15°, ±15% scale, ±1.5 px) with a photometric change are a positive
pair; every other patch of the batch is a negative; the loss is HardNet's hardest-in-batch triplet margin
loss ``mean(max(0, 1 + d(a_i, p_i) − min(min_j d(a_i, p_j), min_j d(a_j, p_i))))``, ``j ≠ i``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["PatchCNN", "cnn_describe", "hardnet_loss", "keypoint_patches", "random_patch_pairs", "train_patch_cnn"]

PATCH = 32
MAGNIFICATION = 6.0


def _patch(img: np.ndarray, x: float, y: float, side: float, angle_deg: float) -> np.ndarray:
    """The ``PATCH × PATCH`` resampling of the square of ``side`` px centred at (x, y), rotated by ``angle_deg``."""
    import cv2

    rot = cv2.getRotationMatrix2D((x, y), angle_deg, PATCH / max(side, 1e-3))
    rot[:, 2] += np.array([PATCH / 2 - x, PATCH / 2 - y])
    return cv2.warpAffine(img, rot, (PATCH, PATCH), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def keypoint_patches(img: np.ndarray, max_keypoints: int) -> tuple[np.ndarray, np.ndarray]:
    """Oriented patches ``[n, 32, 32]`` (float32 in 0..1) at the strongest SIFT keypoints, and their ``xy``."""
    import cv2

    kps = cv2.SIFT_create(nfeatures=max_keypoints).detect(img, None)  # pyright: ignore[reportAttributeAccessIssue]
    kps = sorted(kps, key=lambda k: -k.response)[:max_keypoints]
    if not kps:
        return np.zeros((0, PATCH, PATCH), np.float32), np.zeros((0, 2), np.float32)
    patches = np.stack([_patch(img, k.pt[0], k.pt[1], MAGNIFICATION * k.size, k.angle) for k in kps])
    patches = patches.astype(np.float32)
    return patches / 255.0, np.array([k.pt for k in kps], dtype=np.float32)


class PatchCNN(nn.Module):
    """``[B, 32, 32]`` patches → ``[B, 128]`` unit descriptors (per-patch normalised input, BN, no bias)."""

    def __init__(self, width: int = 16, dim: int = 128) -> None:
        super().__init__()
        w = width

        def block(cin: int, cout: int, stride: int = 1) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

        self.net = nn.Sequential(
            *block(1, w),
            *block(w, w),
            *block(w, 2 * w, 2),
            *block(2 * w, 2 * w),
            *block(2 * w, 4 * w, 2),
            nn.Conv2d(4 * w, dim, 8, bias=False),
            nn.BatchNorm2d(dim, affine=False),
        )

    def forward(self, patches: Tensor) -> Tensor:
        x = patches[:, None]
        x = (x - x.mean((2, 3), keepdim=True)) / (x.std((2, 3), keepdim=True) + 1e-6)
        return F.normalize(self.net(x).flatten(1), dim=-1)


def hardnet_loss(a: Tensor, p: Tensor, margin: float = 1.0) -> Tensor:
    """HardNet's hardest-in-batch triplet loss on unit descriptors ``a``, ``p`` ``[B, D]`` (row i matches row i)."""
    dist = torch.cdist(a, p)
    pos = dist.diagonal()
    off = dist + 10.0 * torch.eye(len(a), dtype=a.dtype, device=a.device)
    neg = torch.minimum(off.min(1).values, off.min(0).values)
    return F.relu(margin + pos - neg).mean()


def random_patch_pairs(images: list[np.ndarray], n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (anchor, positive) patch pairs ``[n, 32, 32]`` from random points of ``images`` (see the module)."""
    anchors, positives = [], []
    for _ in range(n):
        img = images[int(rng.integers(len(images)))]
        h, w = img.shape
        side = float(rng.uniform(12, 40))
        x, y = rng.uniform(side, w - side), rng.uniform(side, h - side)
        angle = float(rng.uniform(0, 360))
        anchors.append(_patch(img, x, y, side, angle))
        s2 = side * math.exp(rng.uniform(-0.15, 0.15))
        pos = _patch(img, x + rng.uniform(-1.5, 1.5), y + rng.uniform(-1.5, 1.5), s2, angle + rng.uniform(-15, 15))
        pos = pos.astype(np.float32) / 255.0
        pos = np.clip(
            pos ** math.exp(rng.uniform(-0.4, 0.4)) * rng.uniform(0.7, 1.2) + rng.normal(0, 0.02, pos.shape), 0, 1
        )
        positives.append(pos)
    return np.stack(anchors).astype(np.float32) / 255.0, np.stack(positives).astype(np.float32)


def train_patch_cnn(
    images: list[np.ndarray], *, steps: int, batch: int = 64, lr: float = 1e-3, seed: int = 0, width: int = 16
) -> tuple[PatchCNN, list[float]]:
    """Train a :class:`PatchCNN` on grey ``images`` for ``steps`` Adam steps; returns it (eval mode), losses."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    cnn = PatchCNN(width)
    opt = torch.optim.Adam(cnn.parameters(), lr=lr)
    losses = []
    cnn.train()
    for _ in range(steps):
        a, p = random_patch_pairs(images, batch, rng)
        loss = hardnet_loss(cnn(torch.from_numpy(a)), cnn(torch.from_numpy(p)))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return cnn.eval(), losses


@torch.no_grad()
def cnn_describe(cnn: PatchCNN, img: np.ndarray, max_keypoints: int) -> tuple[np.ndarray, np.ndarray]:
    """CNN descriptors ``[n, 128]`` (unit rows) at the strongest SIFT keypoints of ``img``, and their ``xy``."""
    patches, xy = keypoint_patches(img, max_keypoints)
    if len(patches) == 0:
        return np.zeros((0, 128), np.float32), xy
    return cnn(torch.from_numpy(patches)).numpy().astype(np.float32), xy
