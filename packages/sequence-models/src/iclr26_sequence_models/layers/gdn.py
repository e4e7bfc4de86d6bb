"""The Gated DeltaNet host layer (fla's ``GatedDeltaNet``) with a position switch.

``x`` → q, k, v (SiLU short convolutions) → L2-normalised q, k → rotation (``nope | rope | selective``)
→ ``β = σ(W_b x)``, ``g = −exp(A_log) · softplus(W_a x + dt_bias)`` → :func:`chunk_gated_delta_rule`
→ per-head RMSNorm ⊙ swish(W_g x) → W_o. The paper applies the rotation to q, k just before the kernel.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from iclr26_sequence_models.layers.conv import ShortConvolution
from iclr26_sequence_models.layers.norm import GatedRMSNorm, l2_normalize
from iclr26_sequence_models.layers.rotary import build_position
from iclr26_sequence_models.ops.delta_rule import chunk_gated_delta_rule

__all__ = ["GatedDeltaNet"]

Cache = dict[str, Any]


class GatedDeltaNet(nn.Module):
    """Gated DeltaNet layer.

    Args:
        hidden_size: Model width D.
        num_heads: Heads H.
        head_dim: Key head dim d_k (values use ``head_dim · expand_v``).
        expand_v: Value expansion (fla default 2).
        conv_size: Short-convolution kernel.
        norm_eps: RMSNorm epsilon.
        position, position_options: As in :class:`GatedLinearAttention`.
        chunk_size: Chunk length of the kernel.
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int = 4,
        head_dim: int | None = None,
        expand_v: float = 2.0,
        conv_size: int = 4,
        norm_eps: float = 1e-5,
        position: str = "nope",
        position_options: dict[str, Any] | None = None,
        chunk_size: int = 64,
    ) -> None:
        super().__init__()
        head_dim = head_dim or hidden_size // num_heads
        self.num_heads, self.head_k_dim, self.head_v_dim = num_heads, head_dim, int(head_dim * expand_v)
        self.chunk_size = chunk_size
        key_dim, value_dim = num_heads * head_dim, num_heads * self.head_v_dim
        self.q_proj = nn.Linear(hidden_size, key_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, key_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, value_dim, bias=False)
        self.a_proj = nn.Linear(hidden_size, num_heads, bias=False)
        self.b_proj = nn.Linear(hidden_size, num_heads, bias=False)
        self.g_proj = nn.Linear(hidden_size, value_dim, bias=False)
        self.o_proj = nn.Linear(value_dim, hidden_size, bias=False)
        self.convs = nn.ModuleDict(
            {n: ShortConvolution(d, conv_size) for n, d in (("q", key_dim), ("k", key_dim), ("v", value_dim))}
        )
        # Mamba-2 style decay parameters: A ~ U(0, 16), dt ~ logU(1e-3, 1e-1) through an inverse softplus
        self.A_log = nn.Parameter(torch.empty(num_heads).uniform_(1e-4, 16).log())
        self.A_log._no_weight_decay = True  # type: ignore[attr-defined]
        dt = torch.exp(torch.rand(num_heads) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3)).clamp(min=1e-4)
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
        self.dt_bias._no_weight_decay = True  # type: ignore[attr-defined]
        self.o_norm = GatedRMSNorm(self.head_v_dim, eps=norm_eps)
        self.position = build_position(position, head_dim, hidden_size, num_heads, position_options)

    def forward(self, x: torch.Tensor, cache: Cache | None = None) -> tuple[torch.Tensor, Cache]:
        """``x: [B, T, D]`` → ``(y [B, T, D], new_cache)``."""
        b, t, _ = x.shape
        cache = cache or {}
        new: Cache = {}
        q, new["conv_q"] = self.convs["q"](self.q_proj(x), cache.get("conv_q"))
        k, new["conv_k"] = self.convs["k"](self.k_proj(x), cache.get("conv_k"))
        v, new["conv_v"] = self.convs["v"](self.v_proj(x), cache.get("conv_v"))
        q = l2_normalize(q.reshape(b, t, self.num_heads, -1))
        k = l2_normalize(k.reshape(b, t, self.num_heads, -1))
        q, k, new["pos"] = self.position(q, k, x, cache.get("pos"))
        v = v.reshape(b, t, self.num_heads, -1)
        beta = self.b_proj(x).sigmoid()
        a = self.a_proj(x)
        a = a if a.dtype == torch.float64 else a.float()
        g = -self.A_log.exp().to(a.dtype) * F.softplus(a + self.dt_bias.to(a.dtype))
        o, new["state"] = chunk_gated_delta_rule(
            q, k, v, g, beta, initial_state=cache.get("state"), chunk_size=self.chunk_size
        )
        o = self.o_norm(o, self.g_proj(x).reshape(b, t, self.num_heads, -1)).reshape(b, t, -1)
        return self.o_proj(o), new
