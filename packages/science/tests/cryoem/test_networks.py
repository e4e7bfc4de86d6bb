"""SCUNet3D (window attention vs its dense twin), JEPA3D, histogram loss and tiled inference."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from iclr26_science.cryoem import (
    JEPA3D,
    SCBlock3d,
    SCUNet3D,
    WindowAttention3d,
    ema_momentum,
    gaussian_window,
    histogram_js,
    naive_window_attention,
    restoration_loss,
    sample_masks,
    sincos_3d,
    soft_histogram,
    tile_starts,
    tiled_inference,
    token_spread,
    variance_covariance_penalty,
)
from iclr26_shared.testing import assert_close


@pytest.mark.parametrize(
    ("size", "shifted"), [((8, 8, 8), False), ((8, 8, 8), True), ((6, 8, 3), True), ((5, 7, 9), True)]
)
def test_window_attention_matches_dense_masked_attention(size: tuple[int, int, int], shifted: bool) -> None:
    torch.manual_seed(0)
    attn = WindowAttention3d(8, 4, window=4, shifted=shifted)
    with torch.no_grad():
        attn.bias_table.normal_()  # a visible relative-position bias
    x = torch.randn(2, *size, 8, dtype=torch.float64, requires_grad=True)
    attn = attn.double()
    fast, naive = attn(x), naive_window_attention(attn, x)
    assert_close(fast, naive, atol=1e-10, rtol=1e-10)
    (g_fast,) = torch.autograd.grad(fast.square().sum(), x)
    (g_naive,) = torch.autograd.grad(naive.square().sum(), x)
    assert_close(g_fast, g_naive, atol=1e-10, rtol=1e-10)


def test_window_attention_is_local_and_shift_changes_the_neighbourhoods() -> None:
    torch.manual_seed(0)
    x = torch.randn(1, 8, 8, 8, 8)
    plain, shifted = WindowAttention3d(8, 4, 4, False), WindowAttention3d(8, 4, 4, True)
    shifted.load_state_dict(plain.state_dict())
    y = x.clone()
    y[0, 7, 7, 7] += 1.0  # a voxel in the last window
    d_plain = (plain(y) - plain(x)).abs().sum(-1)[0]
    assert d_plain[:4, :4, :4].max() == 0 and d_plain[4:, 4:, 4:].max() > 0  # only its own window moves
    d_shift = (shifted(y) - shifted(x)).abs().sum(-1)[0]
    assert d_shift[:6, :6, :6].max() == 0 and d_shift[6:, 6:, 6:].max() > 0  # shifted window [6, 8)
    assert d_shift[4, 4, 4] == 0 and d_plain[4, 4, 4] > 0


def test_scunet_shapes_and_errors() -> None:
    net = SCUNet3D(dim=8, depths=(1, 1, 1, 1, 1), head_dim=4, window=4)
    x = torch.randn(2, 1, 16, 16, 8)
    assert net(x).shape == x.shape
    assert net.encode(x).shape == (2, 32, 4, 4, 2) and net.encoder_dim == 32
    with pytest.raises(ValueError, match="divisible by 4"):
        net(torch.randn(1, 1, 10, 16, 16))
    with pytest.raises(ValueError, match="2·L"):
        SCUNet3D(depths=(1, 1))


def test_sincos_codes_are_distinct_and_bounded() -> None:
    pe = sincos_3d((3, 4, 5), 24)
    assert pe.shape == (60, 24) and pe.abs().max() <= 1.0
    assert torch.cdist(pe, pe).add(torch.eye(60) * 10).min() > 1e-3


def test_masks_are_disjoint_nonempty_and_sized() -> None:
    rng = np.random.default_rng(0)
    fracs = []
    for _ in range(50):
        ctx, tgt = sample_masks((6, 6, 6), rng)
        assert len(ctx) and len(tgt) and not set(ctx.tolist()) & set(tgt.tolist())
        fracs.append(len(tgt) / 216)
    assert 0.25 < float(np.mean(fracs)) < 0.75  # four 15–20 % blocks, overlapping


def test_ema_schedule() -> None:
    assert ema_momentum(0, 100) == pytest.approx(0.996) and ema_momentum(100, 100) == pytest.approx(1.0)
    assert ema_momentum(30, 100) < ema_momentum(60, 100)


def _jepa() -> JEPA3D:
    torch.manual_seed(0)
    return JEPA3D(
        SCUNet3D(dim=8, depths=(1, 1, 1, 1, 1), head_dim=4, window=4), (4, 4, 4), embed_dim=24, predictor_dim=24
    )


def test_jepa_context_sees_no_target_voxels_and_target_gets_no_gradient() -> None:
    model = _jepa()
    ctx, tgt = sample_masks((4, 4, 4), np.random.default_rng(1))
    m = model.patch_mask(ctx, torch.zeros(1))
    assert m.shape == (1, 1, 16, 16, 16) and m.sum() == len(ctx) * 64
    x = torch.rand(2, 1, 16, 16, 16, requires_grad=True)
    loss = model.loss(x, ctx, tgt)
    loss.backward()
    assert x.grad is not None
    g = x.grad.abs().sum(0)[0]
    assert float(g[m[0, 0] == 0].max()) == 0.0  # target patches reach the loss only through f_θt (no grad)
    assert all(p.grad is None for p in model.target_backbone.parameters())
    assert model.backbone.head.weight.grad is not None and model.mask_token.grad is not None


def test_jepa_context_input_switch_zero_input_or_drop_tokens() -> None:
    """``zero-input`` (default): voxels of the non-context patches never reach the context tokens.
    ``drop-tokens`` (the paper's order): the context tokens are the full map's tokens (then only the context
    rows go on), so a change inside a target patch reaches them through the encoder's receptive field, and
    the target voxels get a gradient through the context encoder."""
    model = _jepa()
    assert model.context_input == "zero-input"
    ctx, tgt = sample_masks((4, 4, 4), np.random.default_rng(1))
    x = torch.rand(2, 1, 16, 16, 16)
    m = model.patch_mask(ctx, x)
    y = x + (1 - m) * torch.rand_like(x)  # the same context patches, other voxels everywhere else
    with torch.no_grad():
        assert torch.equal(model.context_tokens(x, ctx), model.context_tokens(y, ctx))
        model.context_input = "drop-tokens"
        full = model._tokens(model.backbone, model.embed, x)
        assert torch.equal(model.context_tokens(x, ctx), full)
        assert not torch.allclose(model.context_tokens(y, ctx)[:, ctx], full[:, ctx], atol=1e-4)
    xg = x.clone().requires_grad_(True)
    model.loss(xg, ctx, tgt).backward()
    assert xg.grad is not None and float(xg.grad.abs().sum(0)[0][m[0, 0] == 0].max()) > 0
    with pytest.raises(ValueError, match="context_input"):
        JEPA3D(model.backbone, (4, 4, 4), context_input="mask")  # type: ignore[arg-type]


def test_jepa_context_input_follows_the_cryolvm_config() -> None:
    import dataclasses

    from iclr26_science.methods.cryolvm.config import PRESETS
    from iclr26_science.methods.cryolvm.model import build_jepa, build_unet

    cfg = PRESETS["smoke"]
    assert cfg.jepa_context == "zero-input" and build_jepa(cfg, build_unet(cfg)).context_input == "zero-input"
    paper = dataclasses.replace(cfg, jepa_context="drop-tokens")
    assert build_jepa(paper, build_unet(paper)).context_input == "drop-tokens"


def test_jepa_training_lowers_its_loss_and_ema_follows() -> None:
    model = _jepa()
    x = torch.rand(4, 1, 16, 16, 16)
    rng = np.random.default_rng(0)
    masks = [sample_masks((4, 4, 4), rng) for _ in range(3)]
    opt = torch.optim.AdamW(model.online_parameters(), lr=3e-3)
    first = sum(model.loss(x, c, t).item() for c, t in masks)
    before = model.target_embed.weight.detach().clone()
    for step in range(25):
        c, t = masks[step % 3]
        opt.zero_grad()
        model.loss(x, c, t).backward()
        opt.step()
        model.update_target(0.9)
    assert sum(model.loss(x, c, t).item() for c, t in masks) < first
    assert not torch.equal(model.target_embed.weight, before)
    model.update_target(0.0)
    assert torch.equal(model.target_embed.weight, model.embed.weight)


def test_histogram_loss_zero_for_identical_maps_and_positive_otherwise() -> None:
    torch.manual_seed(0)
    a = torch.rand(3, 1, 8, 8, 8)
    assert float(histogram_js(a, a)) == pytest.approx(0.0, abs=1e-7)
    h = soft_histogram(a)
    assert h.shape == (3, 64) and torch.allclose(h.sum(-1), torch.ones(3))
    b = a**3
    js = float(histogram_js(a, b))
    assert 0 < js <= math.log(2) and js == pytest.approx(float(histogram_js(b, a)))
    assert float(histogram_js(a, torch.zeros_like(a))) > float(histogram_js(a, b))
    assert float(restoration_loss(a, b, 1.0)) == pytest.approx(float(((a - b) ** 2).mean()))
    assert float(restoration_loss(a, b, 0.5)) == pytest.approx(0.5 * float(((a - b) ** 2).mean()) + 0.5 * js, rel=1e-5)


def test_histogram_loss_gradient_moves_the_histogram() -> None:
    torch.manual_seed(0)
    target = torch.rand(1, 1, 6, 6, 6)
    pred = (0.5 + 0.05 * torch.randn_like(target)).requires_grad_(True)
    opt = torch.optim.Adam([pred], lr=0.02)
    start = float(histogram_js(pred.detach(), target))
    for _ in range(30):
        opt.zero_grad()
        histogram_js(pred, target).backward()
        opt.step()
    assert float(histogram_js(pred.detach(), target)) < 0.5 * start


def test_tile_starts_cover_the_edge() -> None:
    assert tile_starts(16, 8, 4) == [0, 4, 8] and tile_starts(18, 8, 4) == [0, 4, 8, 10] and tile_starts(8, 8, 8) == [0]
    with pytest.raises(ValueError, match="larger than the map"):
        tile_starts(4, 8, 4)
    w = gaussian_window(8)
    assert w.shape == (8, 8, 8) and w.max() == w[3, 3, 3] == w[4, 4, 4]


def test_tiling_reproduces_full_volume_inference() -> None:
    torch.manual_seed(0)
    vol = torch.randn(1, 20, 24, 16)
    point = nn.Conv3d(1, 2, 1)  # a voxel-wise model: every tile agrees on every voxel
    with torch.no_grad():
        full = point(vol[None])[0]
    for weighting in ("gaussian", "uniform"):
        tiled = tiled_inference(point, vol, tile=8, stride=4, weighting=weighting)  # type: ignore[arg-type]
        assert_close(tiled, full, atol=1e-5, rtol=1e-5)
    net = SCUNet3D(dim=8, depths=(1, 1, 1), head_dim=4, window=4).eval()
    cube = torch.randn(1, 16, 16, 16)
    with torch.no_grad():
        assert_close(tiled_inference(net, cube, tile=16, stride=8), net(cube[None])[0], atol=1e-5, rtol=1e-5)
        # overlapping tiles of a real network: close to the full volume away from the tile borders
        big = torch.zeros(1, 32, 32, 32)
        big[:, 8:24, 8:24, 8:24] = torch.rand(1, 16, 16, 16)
        t = tiled_inference(net, big, tile=16, stride=4)
        f = net(big[None])[0]
    assert t.shape == f.shape and float(torch.corrcoef(torch.stack([t.flatten(), f.flatten()]))[0, 1]) > 0.9


def test_token_spread_sees_a_collapsed_encoder() -> None:
    torch.manual_seed(0)
    net = SCUNet3D(dim=8, depths=(1, 1, 1), head_dim=4, window=4)
    x = torch.rand(3, 1, 8, 8, 8)
    healthy = token_spread(net, x)
    last = net.body[-1]
    assert isinstance(last, SCBlock3d)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        bias = last.conv1_2.bias
        assert bias is not None
        bias.fill_(1.0)
        bias[0] = 2.0  # every token the same non-constant vector
    collapsed = token_spread(net, x)
    assert collapsed["mean_cos"] == pytest.approx(1.0, abs=1e-5) and collapsed["feature_std"] < 1e-4
    assert healthy["mean_cos"] < 0.99 and healthy["feature_std"] > 0.01


def test_variance_covariance_penalty_is_zero_when_whitened_and_large_when_collapsed() -> None:
    """VICReg's v + c: ~0 for whitened tokens (unit std, no correlation), ≈ γ = 1 for identical tokens,
    and the covariance term sees duplicated features."""
    torch.manual_seed(0)
    z = torch.randn(4000, 8)
    z = (z - z.mean(0)) @ torch.linalg.inv(torch.linalg.cholesky(torch.cov(z.T))).T  # whitened
    assert float(variance_covariance_penalty(z)) < 1e-3
    collapsed = torch.ones(100, 8) * torch.arange(8.0)
    assert float(variance_covariance_penalty(collapsed)) == pytest.approx(1.0 - 1e-2, abs=1e-3)
    dup = torch.randn(4000, 1).expand(4000, 8) * 2  # std 2 (no variance penalty), fully correlated
    assert float(variance_covariance_penalty(dup)) == pytest.approx(4.0**2 * 8 * 7 / 8, rel=0.1)  # Σ_{i≠j} C²/E


def test_jepa_collapse_guard_adds_the_penalty_on_the_context_tokens() -> None:
    model = _jepa()
    x = torch.rand(2, 1, 16, 16, 16)
    ctx, tgt = sample_masks((4, 4, 4), np.random.default_rng(1))
    plain = model.loss(x, ctx, tgt).item()
    model.vc_weight = 0.5
    guarded = model.loss(x, ctx, tgt)
    with torch.no_grad():
        tokens = model._tokens(model.backbone, model.embed, x * model.patch_mask(ctx, x))[:, ctx]
        penalty = variance_covariance_penalty(tokens.reshape(-1, tokens.shape[-1])).item()
    assert penalty > 0 and guarded.item() == pytest.approx(plain + 0.5 * penalty, rel=1e-5)
    guarded.backward()
    assert model.backbone.head.weight.grad is not None
