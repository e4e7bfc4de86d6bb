"""The DDT: shapes, conditioning, the encoder/decoder split and a cached condition, both backbones."""

from __future__ import annotations

from typing import cast

import pytest
import torch

from iclr26_generative_vision.nn.ddt import DDT
from iclr26_shared.errors import ConfigError


def randomize(model: DDT, scale: float) -> DDT:
    """Random values for every parameter (the zero-initialised gates would hide the conditioning)."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=gen))
    return model.eval()


def _ddt(arch: str, size: int = 8) -> DDT:
    torch.manual_seed(0)
    model = DDT(size, 1, 10, patch_size=2, hidden=32, encoder_depth=2, decoder_depth=1, heads=2, arch=arch)  # type: ignore[arg-type]
    return randomize(model, scale=0.2)


@pytest.mark.parametrize("arch", ["ddt", "dit"])
def test_shapes_and_conditioning(arch: str) -> None:
    model = _ddt(arch)
    x, t = torch.randn(3, 1, 8, 8), torch.tensor([0.1, 0.5, 0.9])
    out = model(x, t, torch.tensor([0, 1, 10]), align_layer=2)
    assert out.velocity.shape == (3, 1, 8, 8) and out.condition.shape == (3, 16, 32)
    assert out.hidden is not None and out.hidden.shape == (3, 16, 32)
    assert model(x, t, torch.tensor([0, 1, 10])).hidden is None
    other = model(x, t, torch.tensor([5, 1, 10])).velocity
    assert not torch.allclose(other[0], out.velocity[0]) and torch.equal(other[1:], out.velocity[1:])
    later = model(x, t + 0.05, torch.tensor([0, 1, 10])).velocity
    assert not torch.allclose(later, out.velocity)


def test_patchify_roundtrip_and_cached_condition() -> None:
    model = _ddt("ddt")
    x = torch.randn(2, 1, 8, 8)
    assert torch.equal(model.unpatchify(model.patchify(x)), x)
    t, y = torch.tensor([0.3, 0.7]), torch.tensor([2, 3])
    full = model(x, t, y)
    reused = model(x, t, y, condition=full.condition)  # same condition: the decoder alone gives the same velocity
    torch.testing.assert_close(reused.velocity, full.velocity)
    assert reused.hidden is None


def test_encoder_output_is_the_aligned_layer_by_default() -> None:
    model = _ddt("ddt")
    x, t, y = torch.randn(2, 1, 8, 8), torch.tensor([0.3, 0.7]), torch.tensor([2, 3])
    z, hidden = model.encode(x, t, y, align_layer=model.encoder_depth)
    assert hidden is not None and torch.equal(z, hidden)
    cond = model(x, t, y).condition
    torch.testing.assert_close(cond, torch.nn.functional.silu(model.time_embed(t)[:, None] + z))


def test_fresh_model_predicts_zero_and_bad_shapes_raise() -> None:
    torch.manual_seed(0)
    model = DDT(8, 1, 10, hidden=32, heads=2)
    out = model(torch.randn(2, 1, 8, 8), torch.rand(2), torch.tensor([0, 1]))
    assert torch.count_nonzero(out.velocity) == 0  # zero-initialised output layer and adaLN gates (DiT)
    with pytest.raises(ConfigError, match="patch_size"):
        DDT(8, 1, 10, patch_size=3)
    with pytest.raises(ConfigError, match="hidden"):
        DDT(8, 1, 10, hidden=24, heads=4)  # head size 6: no 2-D RoPE
    DDT(8, 1, 10, hidden=24, heads=4, arch="dit")  # the plain variant has no RoPE constraint


class _PortedDDTBlock(torch.nn.Module):
    """One block of MCG-NJU/DDT (``decoupled_improved_dit.py``: ``DDTBlock``, ``RAttention``, ``RMSNorm``,
    ``FeedForward``, ``precompute_freqs_cis_2d``) re-written here independently, with real cos/sin rotations."""

    def __init__(self, hidden: int, heads: int, grid: int) -> None:
        super().__init__()
        self.heads, self.hidden = heads, hidden
        self.norm1_w, self.norm2_w = torch.nn.Parameter(torch.ones(hidden)), torch.nn.Parameter(torch.ones(hidden))
        hd = hidden // heads
        self.q_w, self.k_w = torch.nn.Parameter(torch.ones(hd)), torch.nn.Parameter(torch.ones(hd))
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.proj = torch.nn.Linear(hidden, hidden)
        inner = int(2 * 4 * hidden / 3)
        self.w1, self.w3 = torch.nn.Linear(hidden, inner, bias=False), torch.nn.Linear(hidden, inner, bias=False)
        self.w2 = torch.nn.Linear(inner, hidden, bias=False)
        self.ada = torch.nn.Linear(hidden, 6 * hidden)
        # angles[n, j]: token n = (row r, col c) on positions linspace(0, 16, grid); pair 2i uses x·ω_i, 2i+1 y·ω_i
        lin = [16.0 * i / (grid - 1) for i in range(grid)]
        omegas = [10000.0 ** (-(4 * i) / hd) for i in range(hd // 4)]
        angles = [
            [(lin[n % grid] if j % 2 == 0 else lin[n // grid]) * omegas[j // 2] for j in range(hd // 2)]
            for n in range(grid * grid)
        ]
        self.angles = torch.tensor(angles, dtype=torch.float64).float()

    @staticmethod
    def _rms(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))

    def _rotate(self, x: torch.Tensor) -> torch.Tensor:  # x [B, N, heads, d]
        a, b = x[..., 0::2], x[..., 1::2]
        cos, sin = self.angles.cos()[None, :, None], self.angles.sin()[None, :, None]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        sm, cm, gm, sf, cf, gf = self.ada(c).chunk(6, dim=-1)
        b, n, h = x.shape
        qkv = self.qkv(self._rms(x, self.norm1_w) * (1 + cm) + sm).reshape(b, n, 3, self.heads, h // self.heads)
        q, k, v = qkv.unbind(2)  # [B, N, heads, d]
        q, k = self._rotate(self._rms(q, self.q_w)), self._rotate(self._rms(k, self.k_w))
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / (h // self.heads) ** 0.5, dim=-1) @ v
        x = x + gm * self.proj(att.transpose(1, 2).reshape(b, n, h))
        y = self._rms(x, self.norm2_w) * (1 + cf) + sf
        return x + gf * self.w2(torch.nn.functional.silu(self.w1(y)) * self.w3(y))


def test_block_matches_a_port_of_ddts_block() -> None:
    from iclr26_generative_vision.nn.ddt import DDTBlock, ddt_rope

    torch.manual_seed(3)
    hidden, heads, grid = 32, 2, 4
    ours = DDTBlock(hidden, heads, "ddt")
    port = _PortedDDTBlock(hidden, heads, grid)
    with torch.no_grad():  # random weights everywhere (norm weights too), copied across
        for p in ours.parameters():
            p.copy_(0.3 * torch.randn(p.shape))
        sd = ours.state_dict()
        w1, w3 = sd["mlp.net.0.proj.weight"].chunk(2, dim=0)  # diffusers' SwiGLU: one projection to [value, gate]
        copies = {
            "norm1_w": sd["norm1.weight"],
            "norm2_w": sd["norm2.weight"],
            "q_w": sd["q_norm.weight"],
            "k_w": sd["k_norm.weight"],
            "qkv.weight": sd["qkv.weight"],
            "proj.weight": sd["proj.weight"],
            "proj.bias": sd["proj.bias"],
            "w1.weight": w3,  # DDT: w2(silu(w1 x) · w3 x), so w1 is the gate
            "w3.weight": w1,
            "w2.weight": sd["mlp.net.2.weight"],
            "ada.weight": sd["adaln.weight"],
            "ada.bias": sd["adaln.bias"],
        }
        port.load_state_dict(copies)
    assert ours.qkv.bias is None and isinstance(ours.adaln, torch.nn.Linear)  # DDT: no qkv bias, plain Linear
    x, c = torch.randn(2, grid * grid, hidden), torch.nn.functional.silu(torch.randn(2, 1, hidden))
    with torch.no_grad():
        torch.testing.assert_close(ours(x, c, ddt_rope(hidden // heads, grid, grid)), port(x, c), atol=1e-5, rtol=1e-5)


def test_saves_and_loads_as_a_diffusers_model_and_rejects_other_shapes(tmp_path) -> None:  # noqa: ANN001
    from iclr26_shared.errors import DataError

    model = _ddt("ddt")
    model.save_pretrained(tmp_path)
    loaded = DDT.from_pretrained(tmp_path).eval()
    assert loaded.config["hidden"] == 32 and loaded.config["arch"] == "ddt"
    x, t, y = torch.randn(2, 1, 8, 8), torch.tensor([0.3, 0.7]), torch.tensor([2, 3])
    with torch.no_grad():
        assert torch.equal(loaded(x, t, y).velocity, model(x, t, y).velocity)
    with pytest.raises(DataError, match=r"sample must be \[B, 1, 8, 8\].*got \[2, 1, 8, 12\]"):
        model(torch.randn(2, 1, 8, 12), t, y)


def _copy_block(ours: torch.nn.Module, port: _PortedDDTBlock) -> None:
    """Our block's weights into the port's names (diffusers' SwiGLU keeps [value, gate] in one projection)."""
    sd = ours.state_dict()
    w1, w3 = sd["mlp.net.0.proj.weight"].chunk(2, dim=0)
    port.load_state_dict(
        {
            "norm1_w": sd["norm1.weight"],
            "norm2_w": sd["norm2.weight"],
            "q_w": sd["q_norm.weight"],
            "k_w": sd["k_norm.weight"],
            "qkv.weight": sd["qkv.weight"],
            "proj.weight": sd["proj.weight"],
            "proj.bias": sd["proj.bias"],
            "w1.weight": w3,
            "w3.weight": w1,
            "w2.weight": sd["mlp.net.2.weight"],
            "ada.weight": sd["adaln.weight"],
            "ada.bias": sd["adaln.bias"],
        }
    )


class _PortedDDT(torch.nn.Module):
    """The whole ``DDT.forward`` of MCG-NJU/DDT (``decoupled_improved_dit.py``) re-derived from its formulas:
    ``unfold`` patches; ``c = SiLU(t_emb + y_emb)``; encoder ``s = s_embedder(patches)`` through the first
    ``n_enc`` blocks on ``c``, then ``s = SiLU(t_emb + s)``; decoder ``x = x_embedder(patches)`` through the
    other blocks on ``s``; ``FinalLayer``: ``Linear(LayerNorm(x)·(1 + scale) + shift)`` with ``(shift, scale)``
    from ``Linear(s)``; ``fold``. ``forward(..., s=state)`` skips the encoder as the reference does.

    The time features are the reference's ``timestep_embedding`` (``[cos, sin]`` of ``t·exp(−ln P·i/half)``)
    with our documented deviation (module docstring of ``nn/ddt.py``): ``1000·t`` and ``P = 10000``
    (diffusers' ``Timesteps``) instead of ``t`` and ``P = 10``."""

    def __init__(
        self, channels: int, classes: int, hidden: int, heads: int, n_enc: int, n_dec: int, patch: int, grid: int
    ) -> None:
        super().__init__()
        self.patch, self.hidden, self.n_enc = patch, hidden, n_enc
        d = channels * patch * patch
        self.s_emb, self.x_emb = torch.nn.Linear(d, hidden), torch.nn.Linear(d, hidden)
        self.t_mlp = torch.nn.Sequential(torch.nn.Linear(256, hidden), torch.nn.SiLU(), torch.nn.Linear(hidden, hidden))
        self.y_table = torch.nn.Embedding(classes + 1, hidden)
        self.blocks = torch.nn.ModuleList(_PortedDDTBlock(hidden, heads, grid) for _ in range(n_enc + n_dec))
        self.final_ada, self.final_lin = torch.nn.Linear(hidden, 2 * hidden), torch.nn.Linear(hidden, d)

    @staticmethod
    def t_freq(t: torch.Tensor, scale: float = 1000.0, period: float = 10000.0) -> torch.Tensor:
        half = 128
        freqs = torch.exp(-torch.log(torch.tensor(period)) * torch.arange(half, dtype=torch.float32) / half)
        args = (scale * t.float())[:, None] * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    def forward(
        self, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor, s: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        b, _, h, w = x.shape
        tokens = torch.nn.functional.unfold(x, kernel_size=self.patch, stride=self.patch).transpose(1, 2)
        temb = self.t_mlp(self.t_freq(t)).view(b, 1, self.hidden)
        c = torch.nn.functional.silu(temb + self.y_table(y).view(b, 1, self.hidden))
        if s is None:
            s = self.s_emb(tokens)
            for blk in self.blocks[: self.n_enc]:
                s = blk(s, c)
            s = torch.nn.functional.silu(temb + s)
        out = self.x_emb(tokens)
        for blk in self.blocks[self.n_enc :]:
            out = blk(out, s)
        shift, scale = self.final_ada(s).chunk(2, dim=-1)
        out = self.final_lin(torch.nn.functional.layer_norm(out, (self.hidden,), eps=1e-6) * (1 + scale) + shift)
        return torch.nn.functional.fold(out.transpose(1, 2), (h, w), kernel_size=self.patch, stride=self.patch), s


def _ours_and_port() -> tuple[DDT, _PortedDDT]:
    torch.manual_seed(5)
    ours = DDT(8, 1, 10, patch_size=2, hidden=32, encoder_depth=2, decoder_depth=2, heads=2)
    port = _PortedDDT(1, 10, 32, 2, 2, 2, 2, 4)
    with torch.no_grad():
        for p in ours.parameters():  # random everywhere, the zero-initialised final layer and norm weights too
            p.copy_(0.3 * torch.randn(p.shape))
        sd = ours.state_dict()
        port.s_emb.load_state_dict({"weight": sd["s_embedder.weight"], "bias": sd["s_embedder.bias"]})
        port.x_emb.load_state_dict({"weight": sd["x_embedder.weight"], "bias": sd["x_embedder.bias"]})
        port.t_mlp[0].load_state_dict(ours.time_embedding.linear_1.state_dict())
        port.t_mlp[2].load_state_dict(ours.time_embedding.linear_2.state_dict())
        port.y_table.load_state_dict(ours.label_embedding.state_dict())
        port.final_ada.load_state_dict(ours.out_modulation.state_dict())
        port.final_lin.load_state_dict(ours.proj_out.state_dict())
        for mine, theirs in zip(ours.blocks, port.blocks, strict=True):
            _copy_block(mine, cast(_PortedDDTBlock, theirs))
    return ours.eval(), port.eval()


def test_whole_model_matches_a_port_of_ddts_forward() -> None:
    """Encoder, condition path, decoder and final layer together, on random weights (issue 54)."""
    ours, port = _ours_and_port()
    gen = torch.Generator().manual_seed(6)
    x, t, y = torch.randn(3, 1, 8, 8, generator=gen), torch.tensor([0.05, 0.5, 0.93]), torch.tensor([0, 7, 10])
    with torch.no_grad():
        out = ours(x, t, y)
        v, s = port(x, t, y)
        torch.testing.assert_close(out.velocity, v, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(out.condition, s, atol=1e-4, rtol=1e-4)  # |s| up to ~10
        assert float(v.abs().mean()) > 0.1  # not a trivially zero output
        # the decoder on a cached state (encoder sharing), another time step
        t2 = torch.tensor([0.3, 0.2, 0.6])
        torch.testing.assert_close(
            ours(x, t2, y, condition=out.condition).velocity, port(x, t2, y, s)[0], atol=1e-5, rtol=1e-5
        )


def test_euler_sampler_matches_ddts_sampler_loop() -> None:
    """Our ``euler_sample`` (CFG interval, encoder sharing every 2 steps) against the reference ``EulerSampler``
    loop (``stateful_flow_matching/sampling.py``) in DDT's own convention: t_ddt from 0 (noise) to 1 on
    ``linspace(0, 1 − 1/n, n) ∪ {1}``, the state reset when ``i % refresh == 0``, both branches in one batch
    ``[uncond, cond]``, CFG only for ``min < t_ddt < max``, ``x ← x + v_ddt·dt``; the network's DDT-convention
    velocity is ``v_ddt(x, t_ddt) = −v(x, 1 − t_ddt)`` (``flow/matching.py``)."""
    from iclr26_generative_vision.flow.sampler import euler_sample

    ours, port = _ours_and_port()
    gen = torch.Generator().manual_seed(7)
    noise, y = torch.randn(3, 1, 8, 8, generator=gen), torch.tensor([1, 4, 9])
    n, refresh, scale, g_min, g_max = 4, 2, 2.5, 0.3, 1.0
    with torch.no_grad():
        samples, _ = euler_sample(
            ours, noise, y, num_steps=n, guidance_scale=scale, cfg_interval=(1 - g_max, 1 - g_min), refresh_rate=refresh
        )
        steps = torch.cat([torch.linspace(0.0, 1 - 1 / n, n), torch.tensor([1.0])])
        x, state = noise, None
        cond = torch.cat([torch.full_like(y, 10), y])
        for i in range(n):
            t_cur, dt = float(steps[i]), float(steps[i + 1] - steps[i])
            if i % refresh == 0:
                state = None
            v, state = port(torch.cat([x, x]), torch.full((6,), 1 - t_cur), cond, state)
            v = -v  # DDT's convention
            u, c = v.chunk(2)
            out = u + scale * (c - u) if g_min < t_cur < g_max else c
            x = x + out * dt
    torch.testing.assert_close(samples, x, atol=1e-5, rtol=1e-5)
