"""Naive vs chunked GLA and gated delta rule: outputs, final states and gradients agree."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from iclr26_sequence_models import chunk_gla, naive_recurrent_gla
from iclr26_sequence_models.ops import chunk_gated_delta_rule, naive_recurrent_gated_delta_rule
from iclr26_shared.testing import assert_close

TOL = {torch.float64: (1e-9, 1e-10), torch.float32: (2e-4, 2e-5)}


def _inputs(t: int, dtype: torch.dtype, gate_scale: float = 1.0, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    b, h, k, v = 2, 3, 8, 6
    return {
        "q": torch.randn(b, t, h, k, generator=gen, dtype=dtype),
        "k": torch.randn(b, t, h, k, generator=gen, dtype=dtype),
        "v": torch.randn(b, t, h, v, generator=gen, dtype=dtype),
        "g": F.logsigmoid(torch.randn(b, t, h, k, generator=gen, dtype=dtype)) * gate_scale,
        "h0": torch.randn(b, h, k, v, generator=gen, dtype=dtype),
    }


def _grads(fn, tensors: dict[str, torch.Tensor], keys: list[str]) -> tuple[torch.Tensor, torch.Tensor, list]:
    leaves = {n: x.clone().requires_grad_(True) for n, x in tensors.items()}
    o, s = fn(leaves)
    gen = torch.Generator().manual_seed(1)
    loss = (o * torch.randn(o.shape, generator=gen, dtype=o.dtype)).sum() + (s.to(o.dtype) ** 2).sum()
    loss.backward()
    return o.detach(), s.detach(), [leaves[n].grad for n in keys]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("t", [1, 37, 64, 130])
@pytest.mark.parametrize("with_state", [False, True])
def test_chunk_gla_matches_naive(dtype: torch.dtype, t: int, with_state: bool) -> None:
    x = _inputs(t, dtype)
    keys = ["q", "k", "v", "g"] + (["h0"] if with_state else [])

    def run(op):
        return lambda a: op(a["q"], a["k"], a["v"], a["g"], initial_state=a["h0"] if with_state else None)

    o1, s1, g1 = _grads(run(naive_recurrent_gla), x, keys)
    o2, s2, g2 = _grads(run(chunk_gla), x, keys)
    rtol, atol = TOL[dtype]
    assert o2.dtype == dtype and o2.shape == (2, t, 3, 6) and s2.shape == (2, 3, 8, 6)
    assert_close(o2, o1, rtol=rtol, atol=atol, msg="output")
    assert_close(s2, s1, rtol=rtol, atol=atol, msg="final state")
    for name, a, b in zip(keys, g2, g1, strict=True):
        assert_close(a, b, rtol=rtol, atol=atol * 10, msg=f"grad {name}")


def test_chunk_gla_chunk_sizes_and_strong_decay_agree() -> None:
    """Strong gates (span > the safe threshold) take the exact path; all chunk sizes give one answer."""
    x = _inputs(100, torch.float64, gate_scale=40.0)
    ref, ref_s = naive_recurrent_gla(x["q"], x["k"], x["v"], x["g"], initial_state=x["h0"])
    for chunk in (16, 32, 64, 128):
        o, s = chunk_gla(x["q"], x["k"], x["v"], x["g"], initial_state=x["h0"], chunk_size=chunk)
        assert torch.isfinite(o).all()
        assert_close(o, ref, rtol=1e-9, atol=1e-10, msg=f"chunk {chunk}")
        assert_close(s, ref_s, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("gate_scale", [1 / 16, 1.0])
def test_one_block_intra_chunk_equals_the_sub_chunk_path(gate_scale: float) -> None:
    """The one-block intra-chunk path that issue 35 tried and reverted (``_diag_blocks`` over a whole 64-step
    chunk, one factorised matmul, used while the chunk's decay span is below ``_SAFE_SPAN``) equals the
    sub-chunk path ``chunk_gla`` runs (``_intra_chunk`` with c = 16) and the exact fp64 sum
    ``Σ_j Σ_d q_id k_jd e^{b_id − b_jd} v_j``, outputs and gradients, in fp32 to fp32 rounding: at GLA's gate
    scale (logsigmoid / 16; span ~4 per chunk) and near the threshold (span ~60 of 80). So the reverted path
    was no numerical defect; MQAR's different seed-0 result with it was a run's sensitivity to rounding."""
    from iclr26_sequence_models.ops.gla import _SAFE_SPAN, _diag_blocks, _intra_chunk

    gen = torch.Generator().manual_seed(3)
    shape = (2, 2, 3, 64)  # [B, H, N chunks, C]
    q, k = (torch.randn(*shape, 16, generator=gen, dtype=torch.float64) for _ in range(2))
    v = torch.randn(*shape, 8, generator=gen, dtype=torch.float64)
    bcum = (F.logsigmoid(torch.randn(*shape, 16, generator=gen, dtype=torch.float64)) * gate_scale).cumsum(-2)
    w = torch.randn(*shape, 8, generator=gen, dtype=torch.float64)

    def sub(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(*shape[:3], 4, 16, x.shape[-1])

    paths = {
        "one block": lambda q, k, v, b: _diag_blocks(q, k, b) @ v,
        "sub-chunks": lambda q, k, v, b: _intra_chunk(sub(q), sub(k), sub(v), sub(b)).reshape(*shape, 8),
        "exact": lambda q, k, v, b: torch.einsum(
            "...id,...jd,...ijd,...jv->...iv",
            q,
            k,
            (b.unsqueeze(-2) - b.unsqueeze(-3)).masked_fill(~torch.ones(64, 64).tril().bool()[..., None], -1e300).exp(),
            v,
        ),
    }
    got = {}
    for name, fn in paths.items():
        dt = torch.float64 if name == "exact" else torch.float32
        leaves = [x.to(dt).requires_grad_(True) for x in (q, k, v, bcum)]
        o = fn(*leaves)
        (o.double() * w).sum().backward()
        got[name] = [o.detach().double(), *(x.grad.double() for x in leaves)]  # type: ignore[union-attr]
    span = (bcum[..., 0, :] - bcum[..., -1, :]).max().item()
    assert span < _SAFE_SPAN[torch.float32] and (span > 50) == (gate_scale == 1.0)
    for name in ("one block", "sub-chunks"):
        for label, a, b in zip(
            ("output", "grad q", "grad k", "grad v", "grad b"), got[name], got["exact"], strict=True
        ):
            assert_close(a, b, rtol=1e-4, atol=1e-5 * b.abs().max().item(), msg=f"{name}: {label}")


def test_gla_semantics_by_hand() -> None:
    """One step by hand: S_1 = k vᵀ, o_1 = scale · S_1ᵀ q; the scale defaults to K^-1/2."""
    q, k = torch.tensor([[[[1.0, 2.0]]]]), torch.tensor([[[[3.0, -1.0]]]])
    v, g = torch.tensor([[[[2.0]]]]), torch.zeros(1, 1, 1, 2)
    o, s = chunk_gla(q, k, v, g)
    assert_close(s[0, 0], torch.tensor([[6.0], [-2.0]]))
    assert_close(o[0, 0, 0], torch.tensor([(6.0 - 4.0) * 2**-0.5]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("t", [1, 45, 64, 150])
@pytest.mark.parametrize("with_state", [False, True])
def test_chunk_delta_rule_matches_naive(dtype: torch.dtype, t: int, with_state: bool) -> None:
    x = _inputs(t, dtype)
    x["k"] = F.normalize(x["k"], dim=-1)
    x["g"] = x["g"][..., 0]
    x["beta"] = torch.sigmoid(x["v"][..., 0])
    keys = ["q", "k", "v", "g", "beta"] + (["h0"] if with_state else [])

    def run(op):
        return lambda a: op(a["q"], a["k"], a["v"], a["g"], a["beta"], initial_state=a["h0"] if with_state else None)

    o1, s1, g1 = _grads(run(naive_recurrent_gated_delta_rule), x, keys)
    o2, s2, g2 = _grads(run(chunk_gated_delta_rule), x, keys)
    rtol, atol = TOL[dtype]
    assert_close(o2, o1, rtol=rtol, atol=atol, msg="output")
    assert_close(s2, s1, rtol=rtol, atol=atol, msg="final state")
    for name, a, b in zip(keys, g2, g1, strict=True):
        assert_close(a, b, rtol=rtol, atol=atol * 10, msg=f"grad {name}")


def test_delta_rule_erases_a_key() -> None:
    """With β = 1 and no decay, writing (k, v₂) after (k, v₁) replaces v₁: S = k v₂ᵀ (unit k)."""
    k = torch.tensor([1.0, 0.0]).reshape(1, 1, 1, 2).repeat(1, 2, 1, 1)
    v = torch.tensor([[5.0], [7.0]]).reshape(1, 2, 1, 1)
    o, s = chunk_gated_delta_rule(k, k, v, torch.zeros(1, 2, 1), torch.ones(1, 2, 1), scale=1.0)
    assert_close(s[0, 0], torch.tensor([[7.0], [0.0]]))
    assert_close(o[0, :, 0, 0], torch.tensor([5.0, 7.0]))


def test_bad_shapes_raise() -> None:
    x = _inputs(4, torch.float32)
    with pytest.raises(ValueError, match="g must be"):
        chunk_gla(x["q"], x["k"], x["v"], x["g"][..., :3])
    with pytest.raises(ValueError, match="initial_state"):
        naive_recurrent_gla(x["q"], x["k"], x["v"], x["g"], initial_state=x["h0"][:, :1])
    with pytest.raises(ValueError, match="T must be >= 1"):
        chunk_gla(x["q"][:, :0], x["k"][:, :0], x["v"][:, :0], x["g"][:, :0])
