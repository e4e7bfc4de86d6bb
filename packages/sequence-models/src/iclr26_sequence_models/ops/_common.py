"""Shared input checks and helpers for the linear-recurrence ops (layout ``[B, T, H, D]``, as in fla)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["check_qkv", "compute_dtype", "pad_time", "to_chunks"]


def compute_dtype(*tensors: torch.Tensor) -> torch.dtype:
    """fp64 when any input is fp64, else fp32 (the recurrences always accumulate in at least fp32)."""
    return torch.float64 if any(t.dtype == torch.float64 for t in tensors) else torch.float32


def check_qkv(
    name: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, initial_state: torch.Tensor | None
) -> tuple[int, int, int, int, int]:
    """Check ``q, k: [B, T, H, K]``, ``v: [B, T, H, V]``, ``initial_state: [B, H, K, V]``; return B, T, H, K, V."""
    if q.dim() != 4 or k.shape != q.shape:
        raise ValueError(f"{name}: q and k must both be [B, T, H, K], got {tuple(q.shape)} and {tuple(k.shape)}")
    b, t, h, dk = q.shape
    if v.dim() != 4 or v.shape[:3] != (b, t, h):
        raise ValueError(f"{name}: v must be [B, T, H, V] = [{b}, {t}, {h}, V], got {tuple(v.shape)}")
    if t < 1:
        raise ValueError(f"{name}: sequence length T must be >= 1, got {t}")
    dv = v.shape[-1]
    if initial_state is not None and initial_state.shape != (b, h, dk, dv):
        raise ValueError(
            f"{name}: initial_state must be [B, H, K, V] = {(b, h, dk, dv)}, got {tuple(initial_state.shape)}"
        )
    return b, t, h, dk, dv


def pad_time(x: torch.Tensor, pad: int) -> torch.Tensor:
    """Zero-pad ``x: [B, T, ...]`` at the end of the time axis by ``pad`` steps."""
    if pad == 0:
        return x
    widths = [0, 0] * (x.dim() - 2) + [0, pad]
    return F.pad(x, widths)


def to_chunks(x: torch.Tensor, chunk: int) -> torch.Tensor:
    """``[B, T, H, *D]`` (T a multiple of ``chunk``) → ``[B, H, N, chunk, *D]`` with N = T / chunk."""
    b, t, h = x.shape[:3]
    rest = x.shape[3:]
    x = x.reshape(b, t // chunk, chunk, h, *rest)
    return x.movedim(3, 1)
