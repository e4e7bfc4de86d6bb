r"""Gated linear attention (GLA, Yang et al. 2024) in fla's layout, in pure PyTorch (CPU and CUDA).

Recurrence (per batch and head; ``S_t ∈ R^{K×V}``, ``g_t ∈ R^K`` log forget gates, ``g_t ≤ 0``)::

    S_t = diag(exp g_t) S_{t-1} + k_t v_tᵀ,        o_t = scale · S_tᵀ q_t

:func:`naive_recurrent_gla` runs this loop literally. :func:`chunk_gla` computes the same thing
chunkwise-parallel: with ``b_i = Σ_{s≤i} g_s`` the cumulative gate inside a chunk of length C,

    o_i = scale · [ (q_i ⊙ e^{b_i})ᵀ S_0  +  Σ_{j≤i} (Σ_d q_{id} k_{jd} e^{b_{id} − b_{jd}}) v_j ],
    S_C = diag(e^{b_C}) S_0 + Σ_j (k_j ⊙ e^{b_C − b_j}) v_jᵀ.

Every exponent above is ≤ 0, so nothing overflows. The intra-chunk term is evaluated per sub-chunk
(size c): on diagonal sub-blocks with the exact ``[c, c, K]`` decay tensor, off the diagonal through
the reference point ``r`` = the cumulative gate at the end of the previous sub-chunk, splitting
``e^{b_i − b_j} = e^{b_i − r} · e^{r − b_j}`` with both factors ≤ 1 (fla's secondary chunking). Diagonal
sub-blocks use the same split with r = the sub-chunk's first position (a matmul) while the decay inside a
sub-chunk stays below ``_SAFE_SPAN`` (so no factor leaves the normal range), else an exact ``[c, c, K]``
decay tensor.
"""

from __future__ import annotations

import math

import torch

from iclr26_sequence_models.ops._common import check_qkv, compute_dtype, pad_time, to_chunks

__all__ = ["chunk_gla", "naive_recurrent_gla"]


def _check_g(name: str, q: torch.Tensor, g: torch.Tensor) -> None:
    if g.shape != q.shape:
        raise ValueError(f"{name}: g must be [B, T, H, K] like q {tuple(q.shape)}, got {tuple(g.shape)}")


def naive_recurrent_gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference GLA: a literal loop over time.

    Args:
        q, k: ``[B, T, H, K]`` queries and keys.
        v: ``[B, T, H, V]`` values.
        g: ``[B, T, H, K]`` log forget gates (≤ 0).
        scale: Query scale; None → ``K ** -0.5``.
        initial_state: ``[B, H, K, V]`` or None (zeros).

    Returns:
        ``(o, final_state)``: ``o: [B, T, H, V]`` in ``v``'s dtype, ``final_state: [B, H, K, V]`` in fp32
        (fp64 when an input is fp64).
    """
    b, t, h, dk, dv = check_qkv("naive_recurrent_gla", q, k, v, initial_state)
    _check_g("naive_recurrent_gla", q, g)
    dt, out_dtype = compute_dtype(q, k, v, g), v.dtype
    qk_scale = dk**-0.5 if scale is None else scale
    q, k, v, g = (x.to(dt) for x in (q, k, v, g))
    state = q.new_zeros(b, h, dk, dv) if initial_state is None else initial_state.to(dt)
    outs = []
    for i in range(t):
        state = state * g[:, i].exp().unsqueeze(-1) + k[:, i].unsqueeze(-1) * v[:, i].unsqueeze(-2)
        outs.append(torch.einsum("bhk,bhkv->bhv", q[:, i] * qk_scale, state))
    return torch.stack(outs, dim=1).to(out_dtype), state


#: Largest total decay ``b_first − b_last`` inside one sub-chunk for which the factorised diagonal
#: blocks cannot overflow/underflow (exp(±80) is inside fp32's normal range); beyond it the exact path runs.
_SAFE_SPAN = {torch.float32: 80.0, torch.float64: 600.0}


def _diag_blocks(qs: torch.Tensor, ks: torch.Tensor, bs: torch.Tensor) -> torch.Tensor:
    """Causal ``[..., S, c, c]`` scores of the diagonal sub-blocks, ``A_ij = Σ_d q_id k_jd e^{b_id − b_jd}``."""
    c = qs.shape[-2]
    tri = torch.ones(c, c, dtype=torch.bool, device=qs.device).tril()
    ref = bs[..., :1, :]  # first position of each sub-chunk
    span = (ref - bs[..., -1:, :]).max()
    if span.item() < _SAFE_SPAN[qs.dtype]:
        # factorised: e^{b_i − b_j} = e^{b_i − r} e^{r − b_j}, both finite for spans below the threshold
        attn = (qs * (bs - ref).exp()) @ (ks * (ref - bs).exp()).transpose(-1, -2)
        return attn.masked_fill(~tri, 0.0)
    diff = bs.unsqueeze(-2) - bs.unsqueeze(-3)  # [..., S, c(i), c(j), K]
    decay = diff.masked_fill(~tri.unsqueeze(-1), float("-inf")).exp()
    return (qs.unsqueeze(-2) * ks.unsqueeze(-3) * decay).sum(-1)


def _intra_chunk(qs: torch.Tensor, ks: torch.Tensor, vs: torch.Tensor, bs: torch.Tensor) -> torch.Tensor:
    """Causal intra-chunk output. Inputs ``[..., S, c, D]`` (S sub-chunks of length c); returns ``[..., S, c, V]``."""
    n_sub = qs.shape[-3]
    out = _diag_blocks(qs, ks, bs) @ vs
    if n_sub == 1:
        return out
    # off-diagonal sub-blocks (row sub-chunk s ≥ 1, column sub-chunk s' < s), reference r_s = b at end of s-1
    ref = bs[..., :-1, -1, :]  # [..., S-1, K]
    q_off = qs[..., 1:, :, :] * (bs[..., 1:, :, :] - ref.unsqueeze(-2)).exp()  # [..., S-1, c, K]
    kd = ref[..., :, None, None, :] - bs[..., None, :-1, :, :]  # [..., S-1(i), S-1(j), c, K]
    pair = torch.ones(n_sub - 1, n_sub - 1, dtype=torch.bool, device=qs.device).tril()
    kd = kd.masked_fill(~pair[:, :, None, None], float("-inf"))
    k_off = ks[..., None, :-1, :, :] * kd.exp()
    a_off = torch.einsum("...ick,...ijdk->...ijcd", q_off, k_off)  # [..., S-1, S-1, c, c]
    o_off = torch.einsum("...ijcd,...jdv->...icv", a_off, vs[..., :-1, :, :])
    return torch.cat([out[..., :1, :, :], out[..., 1:, :, :] + o_off], dim=-3)


def chunk_gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = 64,
    sub_chunk_size: int = 16,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chunkwise-parallel GLA, equal to :func:`naive_recurrent_gla` (outputs and gradients).

    Args:
        q, k: ``[B, T, H, K]``; v: ``[B, T, H, V]``; g: ``[B, T, H, K]`` log forget gates (≤ 0).
        scale: Query scale; None → ``K ** -0.5``.
        initial_state: ``[B, H, K, V]`` or None.
        chunk_size: Chunk length C (a multiple of ``sub_chunk_size``); T need not divide it (zero padding:
            a padded step has k = 0 and g = 0, so it leaves the state unchanged).
        sub_chunk_size: Secondary chunk length c for the numerically safe intra-chunk term.

    Returns:
        ``(o [B, T, H, V], final_state [B, H, K, V])`` with the dtypes of :func:`naive_recurrent_gla`.
    """
    b, t, h, dk, dv = check_qkv("chunk_gla", q, k, v, initial_state)
    _check_g("chunk_gla", q, g)
    if sub_chunk_size < 1 or chunk_size < 1 or chunk_size % sub_chunk_size:
        raise ValueError(f"chunk_gla: chunk_size {chunk_size} must be a positive multiple of {sub_chunk_size}")
    dt, out_dtype = compute_dtype(q, k, v, g), v.dtype
    qk_scale = dk**-0.5 if scale is None else scale
    # short inputs (decoding) use one chunk of the smallest sufficient multiple of the sub-chunk size
    c = sub_chunk_size
    chunk = min(chunk_size, c * math.ceil(t / c))
    pad = (-t) % chunk
    q, k, v, g = (to_chunks(pad_time(x.to(dt), pad), chunk) for x in (q, k, v, g))  # [B, H, N, C, D]
    q = q * qk_scale
    n = q.shape[2]
    bcum = g.cumsum(-2)  # within-chunk cumulative log gate
    b_last = bcum[..., -1, :]  # [B, H, N, K]
    # inter-chunk: per-chunk state increments, then a scan over chunks (elementwise + add only)
    k_tail = k * (b_last.unsqueeze(-2) - bcum).exp()
    increments = k_tail.transpose(-1, -2) @ v  # [B, H, N, K, V]
    decays = b_last.exp().unsqueeze(-1)  # [B, H, N, K, 1]
    state = q.new_zeros(b, h, dk, dv) if initial_state is None else initial_state.to(dt)
    entering = []
    for i in range(n):
        entering.append(state)
        state = state * decays[:, :, i] + increments[:, :, i]
    o = (q * bcum.exp()) @ torch.stack(entering, dim=2)  # [B, H, N, C, V]
    # intra-chunk
    n_sub = chunk // c

    def sub(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(*x.shape[:3], n_sub, c, x.shape[-1])

    o = o + _intra_chunk(sub(q), sub(k), sub(v), sub(bcum)).reshape(o.shape)
    o = o.movedim(1, 3).reshape(b, n * chunk, h, dv)[:, :t]
    return o.to(out_dtype), state
