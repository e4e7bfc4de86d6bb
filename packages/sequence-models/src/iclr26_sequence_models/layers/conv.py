"""Depthwise causal short convolution with a decoding cache (fla's ``ShortConvolution``, in plain PyTorch)."""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ShortConvolution"]


class ShortConvolution(nn.Module):
    """``y_t = act(Σ_{i<W} w_i ⊙ x_{t-i})`` per channel; input and output ``[B, T, D]``.

    The cache holds the last ``W - 1`` inputs ``[B, D, W - 1]``, so feeding a sequence in pieces with
    the cache gives the same output as one full pass.
    """

    def __init__(
        self, hidden_size: int, kernel_size: int = 4, bias: bool = False, activation: Literal["silu"] | None = "silu"
    ) -> None:
        super().__init__()
        if kernel_size < 1:
            raise ValueError(f"ShortConvolution: kernel_size must be >= 1, got {kernel_size}")
        if activation not in (None, "silu"):
            raise ValueError(f"ShortConvolution: activation must be None or 'silu', got {activation!r}")
        self.hidden_size = hidden_size
        self.kernel_size = kernel_size
        self.activation = activation
        conv = nn.Conv1d(hidden_size, hidden_size, kernel_size, groups=hidden_size, bias=bias)
        self.weight = conv.weight  # [D, 1, W]
        self.bias = conv.bias

    def forward(self, x: torch.Tensor, cache: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x: [B, T, D]`` → ``(y [B, T, D], new_cache [B, D, W-1])``."""
        b, _, d = x.shape
        xt = x.transpose(1, 2)
        if cache is None:
            cache = xt.new_zeros(b, d, self.kernel_size - 1)
        full = torch.cat([cache.to(xt.dtype), xt], dim=-1)
        y = F.conv1d(full, self.weight, self.bias, groups=d)
        if self.activation == "silu":
            y = F.silu(y)
        new_cache = full[..., full.shape[-1] - (self.kernel_size - 1) :]
        return y.transpose(1, 2), new_cache
