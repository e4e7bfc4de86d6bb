"""Flow-matching convention, the DUPA paths, projector and loss, and the Euler sampler with sharing."""

from __future__ import annotations

from typing import Any, cast

import pytest
import torch

from iclr26_generative_vision.flow.dupa import ConditionProjector, draw_paths, dupa_loss
from iclr26_generative_vision.flow.matching import add_noise, sample_times, velocity_target
from iclr26_generative_vision.flow.sampler import euler_sample, euler_step, flow_scheduler
from iclr26_generative_vision.nn.ddt import DDT


def randomize(model: DDT, scale: float) -> DDT:
    """Random values for every parameter (the zero-initialised gates would hide the conditioning)."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=gen))
    return model.eval()


def test_convention_matches_diffusers_flow_matching() -> None:
    """x_t = (1 − t) x + t ε equals diffusers' scale_noise at σ = t; v* = ε − x moves x_t along the path."""
    gen = torch.Generator().manual_seed(0)
    x, eps = torch.randn(4, 1, 8, 8, generator=gen), torch.randn(4, 1, 8, 8, generator=gen)
    sched = flow_scheduler(4)
    sigmas, timesteps = cast(torch.Tensor, sched.sigmas), cast(torch.Tensor, sched.timesteps)
    torch.testing.assert_close(sigmas, torch.tensor([1.0, 0.75, 0.5, 0.25, 0.0]))
    for i in range(4):
        ours = add_noise(x, eps, torch.full((4,), float(sigmas[i])))
        ref = sched.scale_noise(cast(Any, x), cast(Any, timesteps[i : i + 1].repeat(4)), cast(Any, eps))
        torch.testing.assert_close(ours, ref)
    assert torch.equal(add_noise(x, eps, torch.zeros(4)), x) and torch.equal(add_noise(x, eps, torch.ones(4)), eps)
    # one Euler step of the scheduler (from t = 0.75) with the exact velocity lands on the path at t = 0.5
    x_t = add_noise(x, eps, torch.full((4,), 0.75))
    sched = flow_scheduler(4)
    nxt = euler_step(sched, velocity_target(x, eps), cast(torch.Tensor, sched.timesteps)[1], x_t)
    torch.testing.assert_close(nxt, add_noise(x, eps, torch.full((4,), 0.5)))


def test_time_sampling_is_in_the_unit_interval() -> None:
    gen = torch.Generator().manual_seed(0)
    for kind in ("lognormal", "uniform"):
        t = sample_times(2000, kind, gen)  # type: ignore[arg-type]
        assert t.min() > 0 and t.max() < 1 and abs(float(t.mean()) - 0.5) < 0.03


def test_paths_use_independent_t_and_noise() -> None:
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(6, 1, 8, 8, generator=gen), torch.arange(6)
    p = draw_paths(x, y, 3, torch.Generator().manual_seed(1))
    t, eps = p.t.reshape(3, 6), (p.target + x.repeat(3, 1, 1, 1)).reshape(3, 6, -1)  # ε = v* + x
    assert p.x_t.shape == (18, 1, 8, 8) and torch.equal(p.labels, y.repeat(3))
    for i in range(3):
        for j in range(i + 1, 3):
            assert (t[i] != t[j]).all() and not torch.allclose(eps[i], eps[j])
    torch.testing.assert_close(p.x_t, add_noise(x.repeat(3, 1, 1, 1), eps.reshape(18, 1, 8, 8), p.t))
    same_noise = draw_paths(x, y, 2, torch.Generator().manual_seed(1), resample="time")
    e = (same_noise.target + x.repeat(2, 1, 1, 1)).reshape(2, 6, -1)
    torch.testing.assert_close(e[0], e[1])
    assert (same_noise.t[:6] != same_noise.t[6:]).all()
    same_time = draw_paths(x, y, 2, torch.Generator().manual_seed(1), resample="noise")
    assert torch.equal(same_time.t[:6], same_time.t[6:])
    # the first path does not depend on K: the baseline (K = 1) sees path 1 of the dual-path variants
    one = draw_paths(x, y, 1, torch.Generator().manual_seed(1))
    assert torch.equal(one.t, p.t[:6]) and torch.equal(one.x_t, p.x_t[:6])


def test_alignment_loss_is_minimal_for_identical_paths_and_symmetric() -> None:
    z = torch.randn(1, 5, 4, 8).repeat(2, 1, 1, 1).requires_grad_(True)
    loss = dupa_loss(z)
    assert loss.item() == pytest.approx(-1.0)  # 1 + L_DUPA = 0: nothing left to align
    (g,) = torch.autograd.grad(loss, z)
    assert float(g.abs().max()) < 1e-6
    w = torch.randn(3, 5, 4, 8)
    assert float(dupa_loss(w)) == pytest.approx(float(dupa_loss(w.flip(0))))
    assert float(dupa_loss(torch.stack([w[0], -w[0]]))) == pytest.approx(1.0)
    # the stop-gradient ablation has the same value, and half the gradient of the symmetric loss
    a = w[:2].clone().requires_grad_(True)
    (g_sym,) = torch.autograd.grad(dupa_loss(a), a)
    (g_sg,) = torch.autograd.grad(dupa_loss(a, stop_grad=True), a)
    assert dupa_loss(a, stop_grad=True).item() == pytest.approx(dupa_loss(a).item())
    torch.testing.assert_close(g_sg, 0.5 * g_sym)
    with pytest.raises(ValueError, match="at least 2 paths"):
        dupa_loss(w[:1])


def test_projector_is_not_zero_at_init() -> None:
    torch.manual_seed(0)
    proj = ConditionProjector(32, 64, 16, gain=0.1)
    layers = [m for m in proj.net if isinstance(m, torch.nn.Linear)]
    assert len(layers) == 3 and all(layer.weight.detach().std().item() > 0 for layer in layers)
    out = proj(torch.randn(3, 5, 32)).detach()
    assert out.shape == (3, 5, 16) and float(out.std()) > 0
    a, b = proj(torch.randn(50, 32)).detach(), proj(torch.randn(50, 32)).detach()
    assert float(torch.nn.functional.cosine_similarity(a, b).mean()) < 0.9  # distinct inputs, distinct outputs
    with pytest.raises(ValueError, match="gain"):
        ConditionProjector(32, 64, 16, gain=0.0)


def _model() -> DDT:
    torch.manual_seed(0)
    return randomize(DDT(8, 1, 10, patch_size=2, hidden=32, encoder_depth=2, decoder_depth=1, heads=2), scale=0.1)


def _manual_euler(model: DDT, noise: torch.Tensor, labels: torch.Tensor, steps: int, scale: float) -> torch.Tensor:
    ts = torch.linspace(1.0, 0.0, steps + 1)
    x = noise
    null = torch.full_like(labels, model.null_label)
    for i in range(steps):
        t = torch.full((x.shape[0],), float(ts[i]))
        v = model(x, t, labels).velocity
        if scale != 1.0 and 0.0 < float(ts[i]) <= 0.7:
            u = model(x, t, null).velocity
            v = u + scale * (v - u)
        x = x + (ts[i + 1] - ts[i]) * v
    return x


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_sharing_with_k1_equals_no_sharing(scale: float) -> None:
    model = _model()
    noise, labels = torch.randn(4, 1, 8, 8, generator=torch.Generator().manual_seed(3)), torch.tensor([0, 1, 2, 3])
    xs, info = euler_sample(model, noise, labels, num_steps=6, guidance_scale=scale, refresh_rate=1)
    torch.testing.assert_close(xs, _manual_euler(model, noise, labels, 6, scale), rtol=1e-4, atol=1e-5)
    guided = 4 if scale != 1.0 else 0  # t = 1, 5/6, 2/3, 1/2, 1/3, 1/6: CFG at the 4 with t in (0, 0.7]
    assert info["encoder_passes"] == info["decoder_passes"] == 6 + guided


def test_sharing_skips_the_encoder_and_changes_the_samples() -> None:
    model = _model()
    noise, labels = torch.randn(4, 1, 8, 8, generator=torch.Generator().manual_seed(3)), torch.tensor([0, 1, 2, 3])
    plain, p_info = euler_sample(model, noise, labels, num_steps=6, refresh_rate=1)
    shared, s_info = euler_sample(model, noise, labels, num_steps=6, refresh_rate=3)
    assert s_info["encoder_passes"] == 2 and s_info["decoder_passes"] == 6  # refreshed at steps 0 and 3
    assert s_info["block_evals"] == 2 * 2 + 6 * 1 < p_info["block_evals"] == 6 * 3
    assert not torch.allclose(plain, shared)
    again, _ = euler_sample(model, noise, labels, num_steps=6, refresh_rate=1)
    assert torch.equal(again, plain)  # dupa's sharing row k = 1 reuses the final evaluation's run
    big, _ = euler_sample(model, noise, labels, num_steps=6, refresh_rate=100)  # encoder once
    assert torch.isfinite(big).all()
    with pytest.raises(ValueError, match="refresh_rate"):
        euler_sample(model, noise, labels, num_steps=6, refresh_rate=0)


@pytest.mark.parametrize(("scale", "refresh"), [(1.0, 1), (2.0, 2)])
def test_row_chunked_euler_sampling_gives_the_same_samples(scale: float, refresh: int) -> None:
    """``max_batch`` (dupa's ``sample_batch``) splits the forwards and the cached conditions into row chunks:
    the same samples bit for bit, with CFG and encoder sharing."""
    model = _model()
    noise, labels = torch.randn(50, 1, 8, 8, generator=torch.Generator().manual_seed(3)), torch.arange(50) % 10
    whole, info = euler_sample(model, noise, labels, num_steps=6, guidance_scale=scale, refresh_rate=refresh)
    for max_batch in (20, 32, 50):  # chunks of 16+ images (a few images per chunk can differ in the last bit)
        chunked, c_info = euler_sample(
            model, noise, labels, num_steps=6, guidance_scale=scale, refresh_rate=refresh, max_batch=max_batch
        )
        assert torch.equal(chunked, whole) and c_info["block_evals"] == info["block_evals"]
