"""RMSNorm and the gated RMSNorm that GLA / Gated DeltaNet apply to their outputs."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["GatedRMSNorm", "RMSNorm", "l2_normalize"]


def l2_normalize(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``x / sqrt(Σ x² + eps)`` over the last axis (fla's ``l2_norm``)."""
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)


class RMSNorm(nn.Module):
    """``y = x / rms(x) · w`` over the last axis."""

    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise ``x [..., D]``."""
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight).to(x.dtype)


class GatedRMSNorm(RMSNorm):
    """``y = RMSNorm(o) ⊙ swish(g)`` (fla's ``FusedRMSNormGated`` with the swish gate)."""

    def forward(self, x: torch.Tensor, gate: torch.Tensor | None = None) -> torch.Tensor:  # type: ignore[override]
        """Normalise ``x [..., D]`` and multiply by ``silu(gate)``."""
        y = super().forward(x)
        return y if gate is None else y * F.silu(gate)
