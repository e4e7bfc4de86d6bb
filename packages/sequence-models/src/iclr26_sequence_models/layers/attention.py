r"""Softmax hosts: ``Attention`` (scaled_dot_product_attention) and the Forgetting Transformer's
``ForgettingAttention`` (FoX, Lin et al. 2025), each with a KV cache and a position switch.

FoX adds a data-dependent decay to the attention logits: with a scalar forget gate per head
``f_t = σ(w_fᵀ x_t + b_f)`` and ``c_t = Σ_{s≤t} log f_s``,

    o_i = Σ_{j≤i} softmax_j(q_iᵀk_j / √d + c_i − c_j) v_j.

With Selective RoPE the paper's code skips q/k normalisation; we keep no qk-norm for all positions.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from iclr26_sequence_models.layers.rotary import build_position

__all__ = ["Attention", "ForgettingAttention"]

Cache = dict[str, Any]


class Attention(nn.Module):
    """Causal multi-head softmax attention.

    Args:
        hidden_size: Model width D; num_heads: H (head dim D/H).
        position, position_options: ``"nope" | "rope" | "selective"`` and its options.
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int = 4,
        position: str = "rope",
        position_options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if hidden_size % num_heads:
            raise ValueError(f"{type(self).__name__}: hidden_size {hidden_size} not divisible by num_heads {num_heads}")
        self.num_heads, self.head_dim = num_heads, hidden_size // num_heads
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.position = build_position(position, self.head_dim, hidden_size, num_heads, position_options)

    def _qkv(self, x: torch.Tensor, cache: Cache) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Cache]:
        b, t, _ = x.shape
        q = self.q_proj(x).reshape(b, t, self.num_heads, -1)
        k = self.k_proj(x).reshape(b, t, self.num_heads, -1)
        v = self.v_proj(x).reshape(b, t, self.num_heads, -1)
        q, k, pos = self.position(q, k, x, cache.get("pos"))
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # [B, H, T, d]
        if "k" in cache:
            k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
        return q, k, v, {"pos": pos, "k": k, "v": v}

    @staticmethod
    def _causal(t_q: int, t_k: int, device: torch.device) -> torch.Tensor:
        """``[t_q, t_k]`` mask, True where key j is visible to query i (``j ≤ past + i``)."""
        past = t_k - t_q
        return torch.arange(t_k, device=device)[None, :] <= torch.arange(t_q, device=device)[:, None] + past

    def forward(self, x: torch.Tensor, cache: Cache | None = None) -> tuple[torch.Tensor, Cache]:
        """``x: [B, T, D]`` → ``(y [B, T, D], new_cache)`` (the cache holds keys, values and position state)."""
        b, t, _ = x.shape
        q, k, v, new = self._qkv(x, cache or {})
        if k.shape[2] == t:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=self._causal(t, k.shape[2], x.device))
        return self.o_proj(o.transpose(1, 2).reshape(b, t, -1)), new


class ForgettingAttention(Attention):
    """FoX: softmax attention with the cumulative log forget-gate bias ``c_i − c_j``; NoPE by default."""

    def __init__(
        self,
        hidden_size: int,
        num_heads: int = 4,
        position: str = "nope",
        position_options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(hidden_size, num_heads, position, position_options)
        self.f_proj = nn.Linear(hidden_size, num_heads, bias=True)

    def forward(self, x: torch.Tensor, cache: Cache | None = None) -> tuple[torch.Tensor, Cache]:
        """``x: [B, T, D]`` → ``(y [B, T, D], new_cache)``."""
        b, t, _ = x.shape
        cache = cache or {}
        q, k, v, new = self._qkv(x, cache)
        f_logit = self.f_proj(x)
        f_logit = f_logit if f_logit.dtype == torch.float64 else f_logit.float()
        log_f = F.logsigmoid(f_logit).transpose(1, 2)  # [B, H, T]
        c_q = log_f.cumsum(-1) + (cache["c_last"] if "c_last" in cache else 0.0)
        c_k = torch.cat([cache["c"], c_q], dim=-1) if "c" in cache else c_q
        bias = c_q.unsqueeze(-1) - c_k.unsqueeze(-2)  # [B, H, T, T_k]
        bias = bias.masked_fill(~self._causal(t, k.shape[2], x.device), float("-inf")).to(q.dtype)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        new.update(c=c_k, c_last=c_q[..., -1:])
        return self.o_proj(o.transpose(1, 2).reshape(b, t, -1)), new
