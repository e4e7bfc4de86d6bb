"""Tiled inference over a whole map with Gaussian-weighted overlap fusion (paper App. D.2).

A network trained on ``t³`` crops restores a larger map tile by tile: tiles of edge ``t`` start every
``stride`` voxels (the last one flush with the end, so the map is covered), each output tile is weighted
by a Gaussian centred in the tile, ``w(r) = exp(−|r − c|² / (2 (σ_frac · t)²))``, and the fused map is the
normalised sum ``Σ_tiles w · f(tile) / Σ_tiles w``. ``weighting="uniform"`` averages the overlaps
(EMReady's sliding-window fusion).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import torch

__all__ = ["gaussian_window", "tile_starts", "tiled_inference"]


def tile_starts(n: int, tile: int, stride: int) -> list[int]:
    """Start indices of tiles of edge ``tile`` every ``stride`` voxels covering ``[0, n)``."""
    if tile > n:
        raise ValueError(f"tile {tile} is larger than the map edge {n} (pad the map first)")
    if not 0 < stride <= tile:
        raise ValueError(f"stride must be in [1, tile = {tile}], got {stride}")
    starts = list(range(0, n - tile + 1, stride))
    if starts[-1] != n - tile:
        starts.append(n - tile)
    return starts


def gaussian_window(tile: int, sigma_frac: float = 0.25) -> np.ndarray:
    """``[tile, tile, tile]`` Gaussian weights centred in the tile (σ = ``sigma_frac · tile`` voxels)."""
    r = np.arange(tile) - (tile - 1) / 2
    g = np.exp(-(r**2) / (2 * (sigma_frac * tile) ** 2))
    return g[:, None, None] * g[None, :, None] * g[None, None, :]


@torch.no_grad()
def tiled_inference(
    fn: Callable[[torch.Tensor], torch.Tensor],
    volume: torch.Tensor,
    tile: int,
    stride: int,
    *,
    weighting: Literal["gaussian", "uniform"] = "gaussian",
    sigma_frac: float = 0.25,
    batch: int = 8,
) -> torch.Tensor:
    """Apply ``fn`` (``[B, C, t, t, t] → [B, C', t, t, t]``) to ``volume`` ``[C, D, H, W]`` tile by tile;
    returns the fused ``[C', D, H, W]``."""
    if volume.ndim != 4:
        raise ValueError(f"tiled_inference: expected a [C, D, H, W] volume, got shape {tuple(volume.shape)}")
    _, d, h, w = volume.shape
    corners = [(z, y, x) for z in tile_starts(d, tile, stride) for y in tile_starts(h, tile, stride)
               for x in tile_starts(w, tile, stride)]  # fmt: skip
    if weighting == "gaussian":
        weight = torch.from_numpy(gaussian_window(tile, sigma_frac)).to(volume)
    elif weighting == "uniform":
        weight = torch.ones((tile,) * 3, dtype=volume.dtype, device=volume.device)
    else:
        raise ValueError(f"weighting must be 'gaussian' or 'uniform', got {weighting!r}")
    out: torch.Tensor | None = None
    norm = torch.zeros((d, h, w), dtype=volume.dtype, device=volume.device)
    for s in range(0, len(corners), batch):
        group = corners[s : s + batch]
        x = torch.stack([volume[:, z : z + tile, y : y + tile, xx : xx + tile] for z, y, xx in group])
        y_hat = fn(x)
        if out is None:
            out = torch.zeros((y_hat.shape[1], d, h, w), dtype=y_hat.dtype, device=volume.device)
        for (z, y, xx), pred in zip(group, y_hat, strict=True):
            out[:, z : z + tile, y : y + tile, xx : xx + tile] += weight * pred
            norm[z : z + tile, y : y + tile, xx : xx + tile] += weight
    assert out is not None
    return out / norm
