"""``SelectiveRoPE`` against the paper's official module, re-derived here from its formulas.

The official ``SelectiveRoPE.forward`` (timurcarstensen/selective-rope, ``modules/rotary.py``, the
``use_triton=False`` path) needs fla's triton kernels (``l2_norm``, ``ShortConvolution``), which do not run on
a CPU, so :func:`official_forward` writes its computation out in plain float32 torch, step by step as the
official code does it, with fla's two pieces by their definitions: ``l2_norm(x) = x / sqrt(Σx² + 1e-6)``
and the causal depthwise convolution ``y_t = act(Σ_i w_i x_{t−W+1+i})`` whose cache continues the stream.
It reads our module's weights but none of its code; the temperature comes from the official formula.
Sizes B = 2, T = 37, H = 2, d_k = 16 on the three settings of the paper's configs.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from iclr26_sequence_models import SelectiveRoPE
from iclr26_sequence_models.layers import rotary_temperature
from iclr26_shared.testing import assert_close

B, T, H, DK, D = 2, 37, 2, 16, 32
R = DK // 2
LM = {"temp_type": "rope", "temp_theta": 500_000.0, "temp_max": 1.0, "phi_proj_rank": 32, "d_conv": 4}
COPY = {"skip_conv": True, "temp_type": "rfa", "temp_theta": 0.9999, "temp_max": 0.25, "phi_proj_rank": 32}
FULL_RANK = {
    "phi_parametrization": "full-rank",
    "conv_act": "silu",
    "use_gate": True,
    "gate_parametrization": "gla",
    "temp_type": "rope",
    "temp_theta": 500_000.0,
}
SETTINGS = {
    "lm": LM,
    **{
        f"copy-gate{int(g)}-bias{int(b)}": {**COPY, "use_gate": g, "use_bias": b}
        for g in (False, True)
        for b in (False, True)
    },
    "full-rank-gla-silu": FULL_RANK,
}


def official_temperature(temp_type: str, theta: float, head_k_dim: int, temp_max: float) -> torch.Tensor:
    """``rotary_temperature`` of the official code: float32, shape ``[1, 1, 1, d_k/2]``."""
    if temp_type == "rfa":
        ang = torch.linspace(0.0, float(theta * torch.pi), steps=head_k_dim // 2, dtype=torch.float32)
        w = torch.sqrt((1 - torch.cos(ang)) / (1 + torch.cos(ang)))
        return (temp_max * w / torch.max(w)).reshape(1, 1, 1, -1)
    expo = torch.arange(0, head_k_dim, 2, dtype=torch.float32) / head_k_dim
    return (temp_max / (theta**expo)).reshape(1, 1, 1, -1)


def official_forward(
    pe: SelectiveRoPE, opts: dict[str, Any], q: torch.Tensor, k: torch.Tensor, x: torch.Tensor, cache: Any = None
) -> tuple[torch.Tensor, torch.Tensor, tuple[Any, torch.Tensor]]:
    """The official forward (``use_triton=False``, ``output_final_state=True``) with ``pe``'s weights."""
    b, t, h, dk = q.shape
    r = dk // 2
    conv_in, offset = cache if cache is not None else (None, None)
    xh = x.reshape(b, t, h, -1)
    xh = xh / torch.sqrt((xh * xh).sum(-1, keepdim=True) + 1e-6)  # fla l2_norm
    if opts.get("phi_parametrization", "low-rank") == "low-rank":
        down, up = pe.get_parameter("phi_proj.0.weight"), pe.get_parameter("phi_proj.1.weight")
        phi = (xh.reshape(b, t, -1) @ down.T) @ up.T  # [B, T, H·R], h-major
    else:  # ChunkedLinear: scalar_h · normalize(W_h, dim=in), einsum "b n i, n i o -> b n o" over (b t)
        scalar, chunked = pe.get_parameter("phi_proj.scale"), pe.get_parameter("phi_proj.weight")
        weight = scalar.reshape(-1, 1, 1) * F.normalize(chunked, dim=-2)
        flat = xh.reshape(b * t, h, -1)
        phi = torch.stack([flat[:, n] @ weight[n] for n in range(h)], 1).reshape(b, t, h * r)
    conv_out = None
    if not opts.get("skip_conv", False):
        w = pe.get_parameter("phi_conv1d.weight")[:, 0]  # [H·R, W]
        width = w.shape[-1]
        prev = conv_in if conv_in is not None else phi.new_zeros(b, width - 1, h * r)
        stream = torch.cat([prev, phi], 1)
        psi = sum(w[:, i] * stream[:, i : i + t] for i in range(width))
        assert isinstance(psi, torch.Tensor)
        if opts.get("conv_act") == "silu":
            psi = psi * torch.sigmoid(psi)
        conv_out = stream[:, -(width - 1) :]
        psi = psi.reshape(b, t, h, r)
    else:  # the official first difference restarts at every call (phi[..., :1] minus zeros)
        psi = (phi - torch.cat([torch.zeros_like(phi[:, :1]), phi[:, :-1]], 1)).reshape(b, t, h, r)
    if opts.get("use_bias", False):
        psi = psi + torch.exp(pe.get_parameter("phi_bias").reshape(1, 1, h, r))
    if opts.get("use_gate", False):
        get = pe.get_parameter
        flat = xh.reshape(b, t, -1)
        if opts.get("gate_parametrization", "standard") == "standard":  # D → H
            gate = torch.sigmoid(flat @ get("phase_gate_proj.weight").T + get("phase_gate_proj.bias"))
        else:  # low-rank / gla: D → 16 → H or H·R
            down, up = get("phase_gate_proj.0.weight"), get("phase_gate_proj.1.weight")
            gate = torch.sigmoid((flat @ down.T) @ up.T + get("phase_gate_proj.1.bias"))
        psi = psi * (gate.reshape(b, t, h, r) if opts.get("gate_parametrization") == "gla" else gate.unsqueeze(-1))
    phi_tilde = torch.cumsum(psi, dim=1)
    if offset is not None:
        phi_tilde = phi_tilde + offset
    temp = official_temperature(opts["temp_type"], opts["temp_theta"], dk, opts.get("temp_max", 1.0))
    qk = torch.cat([q, k], dim=2).float()
    angle = temp * torch.cat([phi_tilde, phi_tilde], dim=2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    a, c = qk[..., :r], qk[..., r:]
    rotated = torch.cat([a * cos - c * sin, a * sin + c * cos], dim=-1).type_as(q)
    q2, k2 = torch.split(rotated, h, dim=2)
    return q2, k2, (conv_out, phi_tilde[:, -1:])


def _setup(opts: dict[str, Any], seed: int = 0):
    torch.manual_seed(seed)
    pe = SelectiveRoPE(DK, D, H, **opts)
    with torch.no_grad():  # trained-size weights: angles of several radians, every path active
        for p in pe.parameters():
            if p.requires_grad:
                p.normal_(0, 0.5)
        if opts.get("phi_parametrization") == "full-rank":  # unit-norm columns: larger gains for large angles
            pe.get_parameter("phi_proj.scale").fill_(4.0)
    gen = torch.Generator().manual_seed(seed + 1)
    q, k = torch.randn(B, T, H, DK, generator=gen), torch.randn(B, T, H, DK, generator=gen)
    x = torch.randn(B, T, D, generator=gen)
    return pe, q, k, x


@pytest.mark.parametrize("opts", list(SETTINGS.values()), ids=list(SETTINGS))
def test_temperature_is_the_official_float32_spectrum(opts: dict[str, Any]) -> None:
    pe = SelectiveRoPE(DK, D, H, **opts)
    official = official_temperature(opts["temp_type"], opts["temp_theta"], DK, opts.get("temp_max", 1.0))
    assert pe.temperature.dtype == torch.float32
    assert_close(pe.temperature, official.reshape(-1), rtol=1e-6, atol=0.0)


def test_float64_switch_gives_the_exact_rfa_spectrum() -> None:
    """At the copying setting float32 cancellation in ``1 + cos ϑ`` moves every ω but the largest by ~9.9 %."""
    exact = torch.tensor([math.tan(0.9999 * math.pi * j / (R - 1) / 2) for j in range(R)], dtype=torch.float64)
    exact = 0.25 * exact / exact.max()
    f64 = SelectiveRoPE(DK, D, H, **COPY, temp_dtype="float64").temperature.double()
    assert_close(f64, exact, rtol=1e-6, atol=0.0)
    in_f64 = rotary_temperature("rfa", 0.9999, DK, 0.25, torch.float64)
    assert_close(in_f64, exact, rtol=1e-8, atol=0.0)  # the cancellation costs float64 ~1e-10
    f32 = SelectiveRoPE(DK, D, H, **COPY).temperature.double()
    rel = (f32[1:-1] - exact[1:-1]) / exact[1:-1]
    assert float(rel.min()) > 0.098 and float(rel.max()) < 0.100  # float32 is 9.90 % above the exact ω
    assert float(f32[-1]) == 0.25 and float(f32[0]) == 0.0
    with pytest.raises(ValueError, match="temp_dtype"):
        SelectiveRoPE(DK, D, H, temp_dtype="float16")  # type: ignore[arg-type]


@pytest.mark.parametrize("opts", list(SETTINGS.values()), ids=list(SETTINGS))
def test_forward_and_gradients_match_the_official_module(opts: dict[str, Any]) -> None:
    pe, q, k, x = _setup(opts)
    leaves = [q.requires_grad_(), k.requires_grad_(), x.requires_grad_()]
    params = [p for p in pe.parameters() if p.requires_grad]
    ours_q, ours_k, _ = pe(q, k, x)
    off_q, off_k, _ = official_forward(pe, opts, q, k, x)
    assert_close(ours_q, off_q, rtol=1e-5, atol=1e-5)
    assert_close(ours_k, off_k, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(ours_q, q, atol=1e-2)  # the rotation is far from the identity
    gen = torch.Generator().manual_seed(7)
    gq, gk = torch.randn(B, T, H, DK, generator=gen), torch.randn(B, T, H, DK, generator=gen)
    ours = torch.autograd.grad((ours_q * gq).sum() + (ours_k * gk).sum(), leaves + params)
    theirs = torch.autograd.grad((off_q * gq).sum() + (off_k * gk).sum(), leaves + params)
    assert len(params) >= 2
    for mine, ref in zip(ours, theirs, strict=True):
        scale = float(ref.abs().max())
        assert scale > 0
        assert_close(mine, ref, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("opts", list(SETTINGS.values()), ids=list(SETTINGS))
def test_prefix_and_continuation_with_caches_equal_one_full_pass(opts: dict[str, Any]) -> None:
    pe, q, k, x = _setup(opts, seed=3)
    with torch.no_grad():
        full_q, full_k, _ = official_forward(pe, opts, q, k, x)
        cut = 20
        q1, k1, cache = pe(q[:, :cut], k[:, :cut], x[:, :cut])
        q2, k2, _ = pe(q[:, cut:], k[:, cut:], x[:, cut:], cache)
        assert_close(torch.cat([q1, q2], 1), full_q, rtol=1e-5, atol=1e-5)
        assert_close(torch.cat([k1, k2], 1), full_k, rtol=1e-5, atol=1e-5)
        # the official cache on the same split: equal where it carries the conv state; with skip_conv its
        # first difference restarts at the cut (φ_cut − 0), the deviation our cache removes (README)
        o1, _, off_cache = official_forward(pe, opts, q[:, :cut], k[:, :cut], x[:, :cut])
        o2, _, _ = official_forward(pe, opts, q[:, cut:], k[:, cut:], x[:, cut:], off_cache)
        assert_close(o1, full_q[:, :cut], rtol=1e-5, atol=1e-5)
        if opts.get("skip_conv"):
            assert not torch.allclose(o2[:, 0], full_q[:, cut], atol=1e-3)
        else:
            assert_close(o2, full_q[:, cut:], rtol=1e-5, atol=1e-5)
