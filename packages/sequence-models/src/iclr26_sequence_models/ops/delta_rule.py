r"""The gated delta rule (Gated DeltaNet, Yang et al. 2025) in fla's layout, in pure PyTorch.

Recurrence (per batch and head; ``S_t ∈ R^{K×V}``, scalar log decay ``g_t ≤ 0``, step size ``β_t``)::

    S_t = e^{g_t} S_{t-1} + β_t k_t (v_t − e^{g_t} S_{t-1}ᵀ k_t)ᵀ,      o_t = scale · S_tᵀ q_t

:func:`chunk_gated_delta_rule` uses the WY/UT form. Inside a chunk with ``Γ_i = exp(Σ_{s≤i} g_s)``
and ``u_i = β_i (v_i − e^{g_i} S_{i-1}ᵀ k_i)`` one has ``S_i = Γ_i S_0 + Σ_{j≤i} (Γ_i/Γ_j) k_j u_jᵀ`` and

    (I + A) U = diag(β) V − diag(β Γ) K S_0,    A_ij = β_i (Γ_i/Γ_j) k_iᵀk_j  (j < i),

so ``U = Ũ − W S_0`` with ``Ũ = (I+A)⁻¹ diag(β) V`` and ``W = (I+A)⁻¹ diag(βΓ) K`` (one batched unit
lower-triangular solve for all chunks). Then, chunk by chunk,

    O = scale · [diag(Γ) Q S_0 + (M ⊙ Q Kᵀ) U],   S_C = Γ_C S_0 + (K ⊙ Γ_C/Γ)ᵀ U,   M_ij = Γ_i/Γ_j (j ≤ i).
"""

from __future__ import annotations

import math

import torch

from iclr26_sequence_models.ops._common import check_qkv, compute_dtype, pad_time, to_chunks

__all__ = ["chunk_gated_delta_rule", "naive_recurrent_gated_delta_rule"]


def _check_g_beta(name: str, q: torch.Tensor, g: torch.Tensor, beta: torch.Tensor) -> None:
    want = tuple(q.shape[:3])
    if tuple(g.shape) != want or tuple(beta.shape) != want:
        raise ValueError(f"{name}: g and beta must be [B, T, H] = {want}, got {tuple(g.shape)}, {tuple(beta.shape)}")


def naive_recurrent_gated_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference gated delta rule: a literal loop over time.

    Args:
        q, k: ``[B, T, H, K]`` (Gated DeltaNet L2-normalises them before the call).
        v: ``[B, T, H, V]``.
        g: ``[B, T, H]`` log decays (≤ 0); beta: ``[B, T, H]`` step sizes in (0, 1).
        scale: Query scale; None → ``K ** -0.5``.
        initial_state: ``[B, H, K, V]`` or None.

    Returns:
        ``(o [B, T, H, V], final_state [B, H, K, V])``.
    """
    b, t, h, dk, dv = check_qkv("naive_recurrent_gated_delta_rule", q, k, v, initial_state)
    _check_g_beta("naive_recurrent_gated_delta_rule", q, g, beta)
    dt, out_dtype = compute_dtype(q, k, v, g, beta), v.dtype
    qk_scale = dk**-0.5 if scale is None else scale
    q, k, v, g, beta = (x.to(dt) for x in (q, k, v, g, beta))
    state = q.new_zeros(b, h, dk, dv) if initial_state is None else initial_state.to(dt)
    outs = []
    for i in range(t):
        state = state * g[:, i].exp()[..., None, None]
        ki = k[:, i]
        delta = (v[:, i] - torch.einsum("bhkv,bhk->bhv", state, ki)) * beta[:, i, :, None]
        state = state + ki.unsqueeze(-1) * delta.unsqueeze(-2)
        outs.append(torch.einsum("bhk,bhkv->bhv", q[:, i] * qk_scale, state))
    return torch.stack(outs, dim=1).to(out_dtype), state


def chunk_gated_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chunkwise gated delta rule, equal to :func:`naive_recurrent_gated_delta_rule`.

    Same arguments plus ``chunk_size`` (T need not divide it: padded steps have k = v = β = g = 0 and
    leave the state unchanged). Returns ``(o [B, T, H, V], final_state [B, H, K, V])``.
    """
    b, t, h, dk, dv = check_qkv("chunk_gated_delta_rule", q, k, v, initial_state)
    _check_g_beta("chunk_gated_delta_rule", q, g, beta)
    if chunk_size < 1:
        raise ValueError(f"chunk_gated_delta_rule: chunk_size must be >= 1, got {chunk_size}")
    dt, out_dtype = compute_dtype(q, k, v, g, beta), v.dtype
    qk_scale = dk**-0.5 if scale is None else scale
    chunk = min(chunk_size, 16 * math.ceil(t / 16))
    pad = (-t) % chunk
    q, k, v = (to_chunks(pad_time(x.to(dt), pad), chunk) for x in (q, k, v))  # [B, H, N, C, D]
    g, beta = (to_chunks(pad_time(x.to(dt), pad), chunk) for x in (g, beta))  # [B, H, N, C]
    q = q * qk_scale
    n = q.shape[2]
    bcum = g.cumsum(-1)
    tri = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    diff = bcum.unsqueeze(-1) - bcum.unsqueeze(-2)  # [B, H, N, C(i), C(j)]
    decay_incl = diff.masked_fill(~tri, float("-inf")).exp()
    decay_strict = diff.masked_fill(~tri.tril(-1), float("-inf")).exp()
    a = beta.unsqueeze(-1) * decay_strict * (k @ k.transpose(-1, -2))
    eye = torch.eye(chunk, dtype=dt, device=q.device)
    lower = eye + a
    u_tilde = torch.linalg.solve_triangular(lower, beta.unsqueeze(-1) * v, upper=False, unitriangular=True)
    w = torch.linalg.solve_triangular(lower, (beta * bcum.exp()).unsqueeze(-1) * k, upper=False, unitriangular=True)
    p = (q @ k.transpose(-1, -2)) * decay_incl
    q_dec = q * bcum.exp().unsqueeze(-1)
    k_tail = k * (bcum[..., -1:] - bcum).exp().unsqueeze(-1)
    chunk_decay = bcum[..., -1].exp()[..., None, None]  # [B, H, N, 1, 1]
    state = q.new_zeros(b, h, dk, dv) if initial_state is None else initial_state.to(dt)
    outs = []
    for i in range(n):
        u = u_tilde[:, :, i] - w[:, :, i] @ state
        outs.append(q_dec[:, :, i] @ state + p[:, :, i] @ u)
        state = chunk_decay[:, :, i] * state + k_tail[:, :, i].transpose(-1, -2) @ u
    o = torch.stack(outs, dim=2)  # [B, H, N, C, V]
    o = o.movedim(1, 3).reshape(b, n * chunk, h, dv)[:, :t]
    return o.to(out_dtype), state
