"""The GLA host layer (fla's ``GatedLinearAttention`` as used by the paper's code) with a position switch.

``x [B, T, D]`` → q, k, v projections (optional SiLU short convolutions) → rotation of q, k by the
position encoding (``nope | rope | selective``; Selective RoPE reads x) → log forget gate
``g = logsigmoid(W₂ W₁ x) / 16`` (low-rank 16) → :func:`chunk_gla` → per-head RMSNorm ⊙ swish(W_g x) → W_o.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from iclr26_sequence_models.layers.conv import ShortConvolution
from iclr26_sequence_models.layers.norm import GatedRMSNorm
from iclr26_sequence_models.layers.rotary import build_position
from iclr26_sequence_models.ops.gla import chunk_gla

__all__ = ["GatedLinearAttention"]

Cache = dict[str, Any]


class GatedLinearAttention(nn.Module):
    """Gated linear attention layer.

    Args:
        hidden_size: Model width D.
        num_heads: Heads H.
        expand_k, expand_v: Key / value width as a multiple of D (head dims ``D·expand/H``).
        use_short_conv, conv_size: SiLU short convolutions on q, k, v.
        gate_logit_normalizer, gate_low_rank_dim: Forget gate ``logsigmoid(W₂W₁x)/normalizer``.
        norm_eps: RMSNorm epsilon.
        position: ``"nope"``, ``"rope"`` or ``"selective"``.
        position_options: Keyword arguments of the position module (``rope_theta`` or SelectiveRoPE's).
        chunk_size: Chunk length of :func:`chunk_gla`.
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int = 4,
        expand_k: float = 0.5,
        expand_v: float = 1.0,
        use_short_conv: bool = False,
        conv_size: int = 4,
        gate_logit_normalizer: float = 16.0,
        gate_low_rank_dim: int = 16,
        norm_eps: float = 1e-5,
        position: str = "nope",
        position_options: dict[str, Any] | None = None,
        chunk_size: int = 64,
    ) -> None:
        super().__init__()
        key_dim, value_dim = int(hidden_size * expand_k), int(hidden_size * expand_v)
        if key_dim % num_heads or value_dim % num_heads:
            raise ValueError(
                f"GatedLinearAttention: key dim {key_dim} / value dim {value_dim} not divisible by {num_heads}"
            )
        self.num_heads, self.head_k_dim, self.head_v_dim = num_heads, key_dim // num_heads, value_dim // num_heads
        self.gate_logit_normalizer, self.chunk_size = gate_logit_normalizer, chunk_size
        self.q_proj = nn.Linear(hidden_size, key_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, key_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, value_dim, bias=False)
        self.g_proj = nn.Linear(hidden_size, value_dim, bias=False)
        self.convs = (
            nn.ModuleDict(
                {n: ShortConvolution(d, conv_size) for n, d in (("q", key_dim), ("k", key_dim), ("v", value_dim))}
            )
            if use_short_conv
            else None
        )
        self.gk_proj = nn.Sequential(
            nn.Linear(hidden_size, gate_low_rank_dim, bias=False), nn.Linear(gate_low_rank_dim, key_dim, bias=True)
        )
        self.o_proj = nn.Linear(value_dim, hidden_size, bias=False)
        self.g_norm = GatedRMSNorm(self.head_v_dim, eps=norm_eps)
        self.position = build_position(position, self.head_k_dim, hidden_size, num_heads, position_options)

    def forward(self, x: torch.Tensor, cache: Cache | None = None) -> tuple[torch.Tensor, Cache]:
        """``x: [B, T, D]`` → ``(y [B, T, D], new_cache)``; pass the cache back to continue the sequence."""
        b, t, _ = x.shape
        cache = cache or {}
        new: Cache = {}
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.convs is not None:
            q, new["conv_q"] = self.convs["q"](q, cache.get("conv_q"))
            k, new["conv_k"] = self.convs["k"](k, cache.get("conv_k"))
            v, new["conv_v"] = self.convs["v"](v, cache.get("conv_v"))
        q, k = q.reshape(b, t, self.num_heads, -1), k.reshape(b, t, self.num_heads, -1)
        v = v.reshape(b, t, self.num_heads, -1)
        q, k, new["pos"] = self.position(q, k, x, cache.get("pos"))
        gk = F.logsigmoid(self.gk_proj(x)).reshape(b, t, self.num_heads, -1) / self.gate_logit_normalizer
        o, new["state"] = chunk_gla(q, k, v, gk, initial_state=cache.get("state"), chunk_size=self.chunk_size)
        gate = self.g_proj(x).reshape(b, t, self.num_heads, -1)
        o = self.g_norm(o, gate).reshape(b, t, -1)
        return self.o_proj(o), new
