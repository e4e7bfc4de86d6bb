"""Reusable layers: DrQ-v2 random-shift augmentation, weight init, TD-MPC2 normed MLP, truncated normal.

Every fast op has a ``naive_*`` twin used by the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "NormedLinear",
    "drqv2_weight_init",
    "linear_schedule",
    "naive_random_shift",
    "normed_mlp",
    "random_shift",
    "sample_shifts",
    "truncated_normal_sample",
]


def sample_shifts(batch: int, pad: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """Integer shifts ``int64 [B, 2]`` (dy, dx), each uniform in ``{0, ..., 2·pad}`` (global torch RNG, CPU)."""
    return torch.randint(0, 2 * pad + 1, (batch, 2)).to(device)


def random_shift(x: torch.Tensor, pad: int, shifts: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """DrQ-v2 augmentation: replicate-pad by ``pad`` and crop back at a random offset per sample.

    Equals DrQ-v2's ``grid_sample`` formulation for integer shifts (each output pixel is an input
    pixel), but gathers the crop directly.

    Args:
        x: ``float [B, C, H, W]`` or ``[B, T, C, H, W]`` (the same shift for every T of a sample, as
            Ego-Foresight uses for the context and its future target).
        pad: Padding in pixels (4 in DrQ-v2).
        shifts: ``int64 [B, 2]`` offsets (dy, dx) in ``{0..2·pad}``; sampled when None.

    Returns:
        ``(shifted x, shifts)``.
    """
    if shifts is None:
        shifts = sample_shifts(x.shape[0], pad, x.device)
    if pad == 0:
        return x, shifts
    lead = x.shape[:-3]
    b = x.shape[0]
    c, h, w = x.shape[-3:]
    flat = x.reshape(b, -1, h, w)
    padded = F.pad(flat, (pad, pad, pad, pad), mode="replicate")
    rows = shifts[:, 0:1].to(x.device) + torch.arange(h, device=x.device)  # [B, H]
    cols = shifts[:, 1:2].to(x.device) + torch.arange(w, device=x.device)  # [B, W]
    bidx = torch.arange(b, device=x.device)[:, None, None]
    out = padded.permute(0, 2, 3, 1)[bidx, rows[:, :, None], cols[:, None, :]]  # [B, H, W, C']
    return out.permute(0, 3, 1, 2).reshape(*lead, c, h, w), shifts


def naive_random_shift(x: torch.Tensor, pad: int, shifts: torch.Tensor) -> torch.Tensor:
    """Loop-over-samples reference for :func:`random_shift`."""
    out = []
    for i in range(x.shape[0]):
        xi = x[i].reshape(-1, *x.shape[-2:])
        p = F.pad(xi[None], (pad, pad, pad, pad), mode="replicate")[0]
        dy, dx = int(shifts[i, 0]), int(shifts[i, 1])
        out.append(p[:, dy : dy + x.shape[-2], dx : dx + x.shape[-1]].reshape(x.shape[1:]))
    return torch.stack(out)


def drqv2_weight_init(m: nn.Module) -> None:
    """DrQ-v2 init: orthogonal weights (ReLU gain for convs), zero biases."""
    if isinstance(m, nn.Linear):
        nn.init.orthogonal_(m.weight.data)
        if m.bias is not None:
            m.bias.data.fill_(0.0)
    elif isinstance(m, nn.Conv2d | nn.ConvTranspose2d):
        nn.init.orthogonal_(m.weight.data, nn.init.calculate_gain("relu"))
        if m.bias is not None:
            m.bias.data.fill_(0.0)


class NormedLinear(nn.Linear):
    """TD-MPC2 block: ``act(LayerNorm(W x + b))`` with Mish by default."""

    def __init__(self, in_features: int, out_features: int, act: nn.Module | None = None) -> None:
        super().__init__(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)
        self.act = act if act is not None else nn.Mish()

    def forward(self, input: torch.Tensor) -> torch.Tensor:  # noqa: A002 - nn.Linear's parameter name
        return self.act(self.ln(super().forward(input)))


def normed_mlp(in_dim: int, hidden: Sequence[int], out_dim: int) -> nn.Sequential:
    """``NormedLinear`` for every hidden layer, a plain ``Linear`` output (TD-MPC2 ``mlp``)."""
    dims = [in_dim, *hidden]
    layers: list[nn.Module] = [NormedLinear(a, b) for a, b in zip(dims[:-1], dims[1:], strict=True)]
    layers.append(nn.Linear(dims[-1], out_dim))
    return nn.Sequential(*layers)


def linear_schedule(init: float, final: float, duration: int, step: int) -> float:
    """DrQ-v2 ``linear(init, final, duration)``: interpolate over ``duration`` steps, then hold ``final``."""
    mix = min(max(step / max(duration, 1), 0.0), 1.0)
    return (1.0 - mix) * init + mix * final


def truncated_normal_sample(mu: torch.Tensor, std: float, clip: float | None = None) -> torch.Tensor:
    """DrQ-v2's ``TruncatedNormal.sample``: ``mu + clip(eps·std, ±clip)`` kept in ``(-1, 1)``.

    The clamp to ``(-1+1e-6, 1-1e-6)`` is straight-through (gradients flow as if unclamped).
    """
    eps = torch.randn_like(mu) * std
    if clip is not None:
        eps = eps.clamp(-clip, clip)
    x = mu + eps
    clamped = x.clamp(-1.0 + 1e-6, 1.0 - 1e-6)
    return x - x.detach() + clamped.detach()
