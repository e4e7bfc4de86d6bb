"""Position encodings: norm preservation, relative scores, the RoPE limit, decoding caches, bad sizes."""

from __future__ import annotations

import math

import pytest
import torch

from iclr26_sequence_models import SelectiveRoPE
from iclr26_sequence_models.layers import Attention, RoPE, apply_rotary, rotary_temperature
from iclr26_shared.testing import assert_close


def _qkx(t: int = 12, h: int = 2, d: int = 8, dm: int = 16, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    return (
        torch.randn(2, t, h, d, generator=gen, dtype=torch.float64),
        torch.randn(2, t, h, d, generator=gen, dtype=torch.float64),
        torch.randn(2, t, dm, generator=gen, dtype=torch.float64),
    )


VARIANTS = [
    {},
    {"skip_conv": True, "use_bias": True},
    {"phi_parametrization": "full-rank", "conv_act": "silu", "use_gate": True},
    {"use_gate": True, "gate_parametrization": "gla", "temp_type": "rfa", "temp_theta": 0.9, "temp_max": 0.25},
    {"use_gate": True, "gate_parametrization": "low-rank", "use_bias": True, "temp_theta": 1.0},
]


@pytest.mark.parametrize("opts", VARIANTS)
def test_selective_rotation_preserves_norms(opts: dict) -> None:
    q, k, x = _qkx()
    pe = SelectiveRoPE(8, 16, 2, **opts).double()
    with torch.no_grad():  # make the angles large and input dependent
        for p in pe.parameters():
            p.normal_(0, 1.0)
    q2, k2, _ = pe(q, k, x)
    assert_close(q2.norm(dim=-1), q.norm(dim=-1))
    assert_close(k2.norm(dim=-1), k.norm(dim=-1))
    assert not torch.allclose(q2, q)


def test_score_depends_only_on_angle_difference() -> None:
    gen = torch.Generator().manual_seed(3)
    q, k = torch.randn(1, 1, 1, 8, dtype=torch.float64, generator=gen), torch.randn(1, 1, 1, 8, dtype=torch.float64)
    th_q, th_k = torch.rand(4, dtype=torch.float64, generator=gen) * 6, torch.rand(4, dtype=torch.float64) * 6
    base = (apply_rotary(q, th_q) * apply_rotary(k, th_k)).sum()
    for shift in (0.7, -2.3, 100.0):
        moved = (apply_rotary(q, th_q + shift) * apply_rotary(k, th_k + shift)).sum()
        assert_close(moved, base)
    other = (apply_rotary(q, th_q + 0.5) * apply_rotary(k, th_k)).sum()
    assert not torch.allclose(other, base)


def test_skip_conv_bias_only_reduces_to_rope() -> None:
    """φ ≡ 0, skip_conv, use_bias (β = 0): θ_t = ω (t + 1) — RoPE with frequencies ω from position 1."""
    q, k, x = _qkx(t=20)
    pe = SelectiveRoPE(8, 16, 2, skip_conv=True, use_bias=True, temp_type="rope", temp_theta=10_000.0).double()
    assert isinstance(pe.phi_proj, torch.nn.Sequential)
    up = pe.phi_proj[1]
    assert isinstance(up, torch.nn.Linear)
    with torch.no_grad():
        up.weight.zero_()
    rope = RoPE(8, base=10_000.0, offset=1)
    qs, ks, _ = pe(q, k, x)
    qr, kr, _ = rope(q, k, x)
    assert_close(qs, qr.to(qs.dtype), rtol=1e-6, atol=1e-6)
    assert_close(ks, kr.to(ks.dtype), rtol=1e-6, atol=1e-6)
    # inside softmax attention the outputs equal RoPE's at offset 0 (scores depend on angle differences only)
    torch.manual_seed(0)
    sel_layer = Attention(
        16, 2, position="selective", position_options={"skip_conv": True, "use_bias": True, "temp_theta": 500_000.0}
    ).double()
    rope_layer = Attention(16, 2, position="rope").double()
    position = sel_layer.position
    assert isinstance(position, SelectiveRoPE) and isinstance(position.phi_proj, torch.nn.Sequential)
    up = position.phi_proj[1]
    assert isinstance(up, torch.nn.Linear)
    with torch.no_grad():
        up.weight.zero_()
    rope_layer.load_state_dict({n: p for n, p in sel_layer.state_dict().items() if not n.startswith("position.")})
    assert_close(sel_layer(x)[0], rope_layer(x)[0], rtol=1e-6, atol=1e-8)


def test_temperature_spectra() -> None:
    f64 = torch.float64
    rope = rotary_temperature("rope", 500_000.0, 8, 1.0, f64)
    assert_close(rope, torch.tensor([500_000.0 ** (-j / 4) for j in range(4)], dtype=torch.float64))
    assert_close(rotary_temperature("rope", 1.0, 8, 0.5, f64), torch.full((4,), 0.5, dtype=torch.float64))
    rfa = rotary_temperature("rfa", 0.9, 8, 0.25, f64)
    ang = [0.9 * math.pi * j / 3 for j in range(4)]
    expect = torch.tensor([math.tan(a / 2) for a in ang], dtype=torch.float64)
    assert_close(rfa, 0.25 * expect / expect.max())
    with pytest.raises(ValueError, match="temp_theta"):
        rotary_temperature("rfa", 1.5, 8, 1.0)


@pytest.mark.parametrize("opts", VARIANTS)
def test_selective_cache_equals_full_pass(opts: dict) -> None:
    q, k, x = _qkx(t=15)
    pe = SelectiveRoPE(8, 16, 2, **opts).double()
    with torch.no_grad():
        for p in pe.parameters():
            p.normal_(0, 0.5)
    qf, kf, _ = pe(q, k, x)
    cache, qs, ks = None, [], []
    for sl in (slice(0, 4), slice(4, 5), slice(5, 6), slice(6, 15)):
        a, b, cache = pe(q[:, sl], k[:, sl], x[:, sl], cache)
        qs.append(a)
        ks.append(b)
    assert_close(torch.cat(qs, 1), qf)
    assert_close(torch.cat(ks, 1), kf)


def test_odd_head_dim_raises() -> None:
    with pytest.raises(ValueError, match="even"):
        SelectiveRoPE(7, 14, 2)
    with pytest.raises(ValueError, match="even"):
        RoPE(5)
