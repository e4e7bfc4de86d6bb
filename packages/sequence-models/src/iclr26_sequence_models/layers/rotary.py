r"""Position encodings applied to queries and keys: ``NoPE``, ``RoPE`` and ``SelectiveRoPE``.

All three share one call: ``pe(q, k, x, cache) -> (q', k', new_cache)`` with ``q, k: [B, T, H, d_k]``
and ``x: [B, T, D]`` the layer input (the residual stream). Rotations use the NeoX half split: with
``R = d_k / 2`` rotary pairs ``(a, b) = (q[..., :R], q[..., R:])``::

    q' = [a cos θ − b sin θ ; a sin θ + b cos θ]     (θ: [B, T, H, R], the same angles for q and k)

so ``q'_tᵀ k'_τ`` depends on the positions only through ``θ_t − θ_τ``.

Selective RoPE (Movahedi et al., ICLR 2026) makes the angle input dependent::

    x̂_t^(h) = x_t^(h) / ‖x_t^(h)‖                          (per-head chunk of x, L2 normalised)
    φ_t = B A x̂_t  (low-rank)   or   φ_t^(h) = g_h · normalize(V^(h)) x̂_t^(h)  (full-rank, weight norm)
    ψ_t = act(ShortConv(φ)_t)   or   ψ_t = φ_t − φ_{t−1}   (skip_conv)
    ψ_t ← ψ_t + exp(β)          (use_bias: adds a RoPE component, β = 0 at init)
    ψ_t ← σ(gate(x̂_t)) ⊙ ψ_t    (use_gate)
    θ_t = ω ⊙ Σ_{s≤t} ψ_s        (fp32 cumulative sum; ω the frozen temperature spectrum)

With ``skip_conv`` and ``φ ≡ 0``, ``use_bias`` gives ``θ_t = ω · (t + 1)``: RoPE with frequencies ω.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import nn

from iclr26_sequence_models.layers.conv import ShortConvolution
from iclr26_sequence_models.layers.norm import l2_normalize

__all__ = [
    "NoPE",
    "PositionName",
    "RoPE",
    "SelectiveRoPE",
    "apply_rotary",
    "build_position",
    "rotary_temperature",
]

PositionName = Literal["nope", "rope", "selective"]
Cache = dict[str, torch.Tensor]


def _check_head_dim(name: str, head_dim: int) -> None:
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"{name}: head_k_dim must be even and >= 2 for a half-split rotation, got {head_dim}")


def apply_rotary(x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Rotate ``x: [B, T, H, 2R]`` by angles ``theta`` broadcastable to ``[B, T, H, R]`` (computed in fp32)."""
    r = x.shape[-1] // 2
    xf = x.float() if x.dtype != torch.float64 else x
    a, b = xf[..., :r], xf[..., r:]
    cos, sin = torch.cos(theta).to(xf.dtype), torch.sin(theta).to(xf.dtype)
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1).to(x.dtype)


def rotary_temperature(
    temp_type: Literal["rope", "rfa"],
    theta: float,
    head_k_dim: int,
    temp_max: float,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The frequency (temperature) vector ω ∈ R^R of Selective RoPE, computed in ``dtype``.

    * ``rope``: ``ω_j = temp_max · theta^(−2j/d_k)``, j = 0..R−1 (``theta >= 1``; theta = 1 → all ω = temp_max).
    * ``rfa``: ``ϑ_j = linspace(0, theta·π, R)``, ``ω_j = tan(ϑ_j / 2) = sqrt((1−cos ϑ_j)/(1+cos ϑ_j))``,
      rescaled so that ``max ω = temp_max`` (``0 < theta < 1``).

    ``dtype`` defaults to float32, the paper's code (``modules/rotary.py``), with the same operations in
    the same order, so the spectrum is the official one bit for bit. For ``rfa`` near θ = 1 this matters:
    ``1 + cos ϑ`` cancels, and at the copying setting (θ = 0.9999, temp_max 0.25, d_k = 16) float32 puts
    every frequency but the largest ~9.9 % below the float64 values (``tests/test_official_parity.py``).
    """
    _check_head_dim("rotary_temperature", head_k_dim)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"rotary_temperature: dtype must be torch.float32 or torch.float64, got {dtype}")
    r = head_k_dim // 2
    if temp_type == "rope":
        if theta < 1.0:
            raise ValueError(f"rotary_temperature: temp_type='rope' needs temp_theta >= 1, got {theta}")
        return temp_max / (theta ** (torch.arange(0, head_k_dim, 2, dtype=dtype) / head_k_dim))
    if temp_type == "rfa":
        if not 0.0 < theta < 1.0:
            raise ValueError(f"rotary_temperature: temp_type='rfa' needs 0 < temp_theta < 1, got {theta}")
        ang = torch.linspace(0.0, float(theta * math.pi), steps=r, dtype=dtype)
        omega = torch.sqrt((1 - torch.cos(ang)) / (1 + torch.cos(ang)))
        return temp_max * omega / torch.max(omega)
    raise ValueError(f"rotary_temperature: temp_type must be 'rope' or 'rfa', got {temp_type!r}")


class NoPE(nn.Module):
    """No position encoding: returns q and k unchanged."""

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, x: torch.Tensor, cache: Cache | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, Cache]:
        """Identity."""
        return q, k, {}


class RoPE(nn.Module):
    """Rotary position embedding with ``ω_j = base^(−2j/d_k)`` and absolute angles ``θ_t = ω (t + offset)``.

    Args:
        head_k_dim: Rotated head dimension (even).
        base: Frequency base (fla's default in the paper's code: 500000).
        offset: Position of the first token (0 as in fla; 1 reproduces Selective RoPE's bias-only angles).
    """

    inv_freq: torch.Tensor

    def __init__(self, head_k_dim: int, base: float = 500_000.0, offset: int = 0) -> None:
        super().__init__()
        _check_head_dim("RoPE", head_k_dim)
        self.head_k_dim = head_k_dim
        self.offset = offset
        freq = 1.0 / base ** (torch.arange(0, head_k_dim, 2, dtype=torch.float64) / head_k_dim)
        self.register_buffer("inv_freq", freq.float(), persistent=False)

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, x: torch.Tensor, cache: Cache | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, Cache]:
        """Rotate ``q, k [B, T, H, d_k]``; the cache counts the tokens already seen."""
        t = q.shape[1]
        seen = cache["seen"] if cache else torch.zeros((), dtype=torch.long, device=q.device)
        pos = (torch.arange(t, device=q.device) + seen + self.offset).float()
        theta = (pos[:, None] * self.inv_freq)[None, :, None, :]  # [1, T, 1, R]
        return apply_rotary(q, theta), apply_rotary(k, theta), {"seen": seen + t}


class _ChunkedLinear(nn.Module):
    """Per-head map ``φ^(h) = g_h · normalize(V^(h), dim=in) x̂^(h)`` (weight norm, gains g_h = 1 at init)."""

    def __init__(self, in_features: int, out_features: int, num_heads: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_heads, in_features, out_features))
        for h in range(num_heads):
            nn.init.kaiming_uniform_(self.weight[h], a=0.0)
        self.scale = nn.Parameter(torch.ones(num_heads))
        self.scale._no_weight_decay = True  # type: ignore[attr-defined]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x: [..., H, in]`` → ``[..., H, out]``."""
        w = self.scale[:, None, None] * F.normalize(self.weight, dim=-2)
        return torch.einsum("...hi,hio->...ho", x, w)


class SelectiveRoPE(nn.Module):
    """Selective RoPE: input-dependent rotation angles, exactly as in the paper's code (module docstring).

    Args:
        head_k_dim: Key/query head dimension d_k (even); R = d_k / 2 frequencies.
        model_dim: Width D of the input x (divisible by ``num_heads``).
        num_heads: Number of heads H.
        skip_conv: Use the first difference ψ_t = φ_t − φ_{t−1} instead of the short convolution.
        d_conv: Short-convolution kernel size.
        conv_act: Activation after the convolution (None or ``"silu"``).
        temp_type, temp_theta, temp_max: The temperature spectrum (:func:`rotary_temperature`).
        temp_dtype: Precision the spectrum is computed in (``"float32"``, the paper's code, or
            ``"float64"``); the stored ω is float32 either way, like every other parameter.
        temp_grad: Train ω (frozen by default).
        phi_proj_rank: Rank r of the low-rank projection.
        phi_parametrization: ``"low-rank"`` (D → r → H·R) or ``"full-rank"`` (per-head, weight-normalised).
        use_gate, gate_parametrization, gate_low_rank_dim: The phase gate σ(gate(x̂)).
        use_bias: Add exp(β) to ψ (β ∈ R^{H×R}, zero at init).
    """

    def __init__(
        self,
        head_k_dim: int,
        model_dim: int,
        num_heads: int = 1,
        skip_conv: bool = False,
        d_conv: int = 4,
        conv_act: Literal["silu"] | None = None,
        temp_type: Literal["rope", "rfa"] = "rope",
        temp_theta: float = 500_000.0,
        temp_max: float = 1.0,
        temp_grad: bool = False,
        temp_dtype: Literal["float32", "float64"] = "float32",
        phi_proj_rank: int = 16,
        phi_parametrization: Literal["low-rank", "full-rank"] = "low-rank",
        use_gate: bool = False,
        gate_parametrization: Literal["standard", "low-rank", "gla"] = "standard",
        gate_low_rank_dim: int = 16,
        use_bias: bool = False,
    ) -> None:
        super().__init__()
        _check_head_dim("SelectiveRoPE", head_k_dim)
        if model_dim % num_heads:
            raise ValueError(f"SelectiveRoPE: model_dim {model_dim} is not divisible by num_heads {num_heads}")
        self.head_k_dim, self.model_dim, self.num_heads = head_k_dim, model_dim, num_heads
        self.pe_dim = head_k_dim // 2
        self.skip_conv = skip_conv
        self.phi_parametrization = phi_parametrization
        self.use_gate, self.gate_parametrization, self.use_bias = use_gate, gate_parametrization, use_bias
        hr = num_heads * self.pe_dim
        if phi_parametrization == "low-rank":
            self.phi_proj: nn.Module = nn.Sequential(
                nn.Linear(model_dim, phi_proj_rank, bias=False), nn.Linear(phi_proj_rank, hr, bias=False)
            )
        elif phi_parametrization == "full-rank":
            self.phi_proj = _ChunkedLinear(model_dim // num_heads, self.pe_dim, num_heads)
        else:
            raise ValueError(f"SelectiveRoPE: unknown phi_parametrization {phi_parametrization!r}")
        self.phi_conv1d = None if skip_conv else ShortConvolution(hr, d_conv, bias=False, activation=conv_act)
        if use_bias:
            self.phi_bias = nn.Parameter(torch.zeros(num_heads, self.pe_dim))
        if temp_dtype not in ("float32", "float64"):
            raise ValueError(f"SelectiveRoPE: temp_dtype must be 'float32' or 'float64', got {temp_dtype!r}")
        dtype = torch.float32 if temp_dtype == "float32" else torch.float64
        omega = rotary_temperature(temp_type, temp_theta, head_k_dim, temp_max, dtype).float()
        self.temperature = nn.Parameter(omega, requires_grad=temp_grad)
        if use_gate:
            out = num_heads * self.pe_dim if gate_parametrization == "gla" else num_heads
            if gate_parametrization == "standard":
                self.phase_gate_proj: nn.Module = nn.Linear(model_dim, num_heads, bias=True)
            elif gate_parametrization in ("low-rank", "gla"):
                self.phase_gate_proj = nn.Sequential(
                    nn.Linear(model_dim, gate_low_rank_dim, bias=False), nn.Linear(gate_low_rank_dim, out, bias=True)
                )
            else:
                raise ValueError(f"SelectiveRoPE: unknown gate_parametrization {gate_parametrization!r}")

    def phases(self, x: torch.Tensor, cache: Cache | None = None) -> tuple[torch.Tensor, Cache]:
        """Angles ``θ: [B, T, H, R]`` (fp32, before ω) for input ``x: [B, T, D]``, and the new cache."""
        b, t, _ = x.shape
        h, r = self.num_heads, self.pe_dim
        xh = l2_normalize(x.reshape(b, t, h, -1))
        if self.phi_parametrization == "low-rank":
            phi = self.phi_proj(xh.reshape(b, t, -1)).reshape(b, t, h, r)
        else:
            phi = self.phi_proj(xh)
        new_cache: Cache = {}
        if self.phi_conv1d is not None:
            psi, new_cache["conv"] = self.phi_conv1d(phi.reshape(b, t, h * r), cache.get("conv") if cache else None)
            psi = psi.reshape(b, t, h, r)
        else:
            prev = cache["phi_prev"] if cache else phi.new_zeros(b, 1, h, r)
            psi = phi - torch.cat([prev.to(phi.dtype), phi[:, :-1]], dim=1)
            new_cache["phi_prev"] = phi[:, -1:]
        if self.use_bias:
            psi = psi + torch.exp(self.phi_bias)
        if self.use_gate:
            gate = self.phase_gate_proj(xh.reshape(b, t, -1)).sigmoid()
            psi = psi * (gate.reshape(b, t, h, r) if self.gate_parametrization == "gla" else gate.unsqueeze(-1))
        total = torch.cumsum(psi.float() if psi.dtype != torch.float64 else psi, dim=1)
        if cache:
            total = total + cache["offset"]
        new_cache["offset"] = total[:, -1:]
        return total, new_cache

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, x: torch.Tensor, cache: Cache | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, Cache]:
        """Rotate ``q, k: [B, T, H, d_k]`` by ``θ = ω ⊙ Σ ψ`` computed from ``x: [B, T, D]``."""
        total, new_cache = self.phases(x, cache)
        theta = self.temperature * total
        return apply_rotary(q, theta), apply_rotary(k, theta), new_cache


def build_position(
    position: str, head_k_dim: int, model_dim: int, num_heads: int, options: dict[str, Any] | None = None
) -> nn.Module:
    """``"nope"`` → :class:`NoPE`; ``"rope"`` → :class:`RoPE` (option ``rope_theta``); ``"selective"`` →
    :class:`SelectiveRoPE` (options = its keyword arguments)."""
    options = dict(options or {})
    if position == "nope":
        return NoPE()
    if position == "rope":
        return RoPE(head_k_dim, base=float(options.get("rope_theta", 500_000.0)))
    if position == "selective":
        options.pop("rope_theta", None)
        return SelectiveRoPE(head_k_dim, model_dim, num_heads, **options)
    raise ValueError(f"unknown position {position!r}: expected 'nope', 'rope' or 'selective'")
