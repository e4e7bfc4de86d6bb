"""Tokenizer shapes per network, SLConv vs its loop twin, SimDINO loss terms, EMA, curriculum, masks, MAE."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from iclr26_science.fmri import (
    MaskedAutoencoder,
    SemanticTokenizer,
    SemantoksEncoder,
    SemantoksPretrainer,
    SLConv,
    augment,
    coding_rate,
    curriculum_weight,
    ema_momentum,
    ema_update,
    mcr_loss,
    naive_slconv,
    network_mask_counts,
    slice_mask,
    token_loss,
)
from iclr26_science.fmri.tokenizer import NetworkTokenizer

GROUPS = [[0, 3, 5], [1, 2], [4, 6, 7, 8, 9]]


def _qkv(enc: torch.nn.Module) -> torch.nn.Linear:
    """The first transformer block's fused q/k/v projection."""
    from iclr26_science.fmri.semantoks import Block

    blk = next(m for m in enc.modules() if isinstance(m, Block))
    return blk.qkv


def test_tokenizer_shapes_per_network() -> None:
    tok = SemanticTokenizer(GROUPS, dim=12, patch=16)
    z = tok(torch.randn(2, 10, 48))
    assert z.shape == (2, 3, 3, 12)  # [B, N, P, D]
    for g, t in zip(GROUPS, tok.tokenizers, strict=True):  # one tokenizer per network, sized by its ROIs
        assert isinstance(t, NetworkTokenizer)
        assert t.conv.in_channels == len(g) and t.slconv.channels == len(g)
        assert t.slconv.heads == math.ceil(6 / len(g)) and t.mix.out_features == 6
    with pytest.raises(ValueError, match="multiple of the patch length"):
        tok(torch.randn(2, 10, 40))
    with pytest.raises(ValueError, match="10 ROIs|network map 10"):
        tok(torch.randn(2, 9, 48))


def test_token_depends_only_on_its_network_and_patch() -> None:
    tok = SemanticTokenizer(GROUPS, dim=8, patch=16)
    x = torch.randn(1, 10, 32)
    y = x.clone()
    y[0, 1, 20] += 5.0  # ROI 1 (network 1), patch 1
    dz = (tok(y) - tok(x)).abs().sum(-1)[0]
    assert dz[1, 1] > 0 and dz.sum() == dz[1, 1]


def test_slconv_matches_loop_twin_outputs_and_gradients() -> None:
    torch.manual_seed(0)
    layer = SLConv(3, 2, kernel_size=4, num_scales=3)
    assert layer.kernel_length == 16 and layer.kernel().shape == (2, 3, 16)
    torch.testing.assert_close(layer.kernel().norm(dim=-1), torch.ones(2, 3))  # normalised by the init norm
    x = torch.randn(2, 3, 20, requires_grad=True)
    fast, slow = layer(x), naive_slconv(layer, x)
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=1e-5)
    g1 = torch.autograd.grad(fast.square().sum(), [x, *layer.parameters()])
    g2 = torch.autograd.grad(slow.square().sum(), [x, *layer.parameters()])
    for a, b in zip(g1, g2, strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="shorter than the kernel"):
        layer(torch.randn(1, 3, 8))


def test_encoder_mask_replaces_tokens() -> None:
    torch.manual_seed(0)
    enc = SemantoksEncoder(GROUPS, dim=8, depth=1, heads=2, patch=16, patches=2).eval()
    x = torch.randn(3, 10, 32)
    h = enc(x)
    assert h.shape == (3, 1 + 3 * 2, 8) and enc.features(x).shape == (3, 16)
    mask = torch.zeros(3, 3, 2, dtype=torch.bool)
    mask[:, 0] = True
    x2 = x.clone()
    x2[:, [0, 3, 5]] = torch.randn(3, 3, 32)  # change only network 0, which is masked
    torch.testing.assert_close(enc(x, mask), enc(x2, mask))
    assert not torch.allclose(enc(x), enc(x2))


def test_coding_rate_and_mcr_loss_formulas() -> None:
    torch.manual_seed(1)
    z = torch.nn.functional.normalize(torch.randn(2, 6, 4), dim=-1)
    v, m, p = z.shape
    eps = 0.05
    want = sum(0.5 * torch.logdet(torch.eye(p) + p / (m * eps) * z[i].T @ z[i]) for i in range(v)) / v
    torch.testing.assert_close(coding_rate(z, eps), want * (p + m) / (p * m))
    s = torch.nn.functional.normalize(torch.randn(2, 6, 4), dim=-1)
    t = torch.nn.functional.normalize(torch.randn(2, 6, 4), dim=-1)
    align = ((t[0] * s[1]).sum(-1).mean() + (t[1] * s[0]).sum(-1).mean()) / 2  # cross-view pairs only
    torch.testing.assert_close(mcr_loss(s, t, eps), -align - coding_rate((s + t) / 2, eps))
    # aligned views have a lower loss than misaligned ones with the same spread
    assert mcr_loss(t.flip(0), t) < mcr_loss(s, t)


def test_token_loss_uses_masked_positions_only() -> None:
    s = torch.nn.functional.normalize(torch.randn(2, 5, 4), dim=-1)
    t = s.clone()
    t[:, 0] = -s[:, 0]
    mask = torch.zeros(2, 5, dtype=torch.bool)
    mask[:, 1:3] = True
    assert float(token_loss(s, t, mask)) == pytest.approx(-1.0)
    mask[:, 0] = True
    assert float(token_loss(s, t, mask)) == pytest.approx(-1 / 3)


def test_teacher_ema_update() -> None:
    torch.manual_seed(2)
    student = torch.nn.Linear(3, 2)
    teacher = copy.deepcopy(student)
    with torch.no_grad():
        for p in teacher.parameters():
            p.add_(1.0)
    before = [p.clone() for p in teacher.parameters()]
    ema_update(teacher, student, 0.9)
    for pt, b, ps in zip(teacher.parameters(), before, student.parameters(), strict=True):
        torch.testing.assert_close(pt, 0.9 * b + 0.1 * ps)
    assert ema_momentum(0, 100) == pytest.approx(0.99) and ema_momentum(100, 100) == pytest.approx(1.0)
    assert ema_momentum(50, 100) == pytest.approx(0.995)


def test_curriculum_weight_schedule() -> None:
    assert curriculum_weight(0, 10) == pytest.approx(0.5)
    assert curriculum_weight(5, 10) == pytest.approx(0.25)
    assert curriculum_weight(10, 10) == 0.0 and curriculum_weight(500, 10) == 0.0
    ws = [curriculum_weight(s, 10) for s in range(11)]
    assert all(a >= b for a, b in zip(ws, ws[1:], strict=False))  # monotone decay
    assert curriculum_weight(5, 10, schedule="linear") == pytest.approx(0.25)
    assert curriculum_weight(7, 10, schedule="linear") == pytest.approx(0.15)
    assert curriculum_weight(999, 10, schedule="constant") == 0.5
    assert curriculum_weight(0, 10, schedule="off") == 0.0


def _network_rows(m: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Which samples are network masks, and their masked-network counts (whole rows masked)."""
    rows = np.array([bool(m[b].all(axis=1).any()) and m[b].sum() == m[b].all(axis=1).sum() * m.shape[2]
                     for b in range(len(m))])  # fmt: skip
    return rows, [int(m[b].all(axis=1).sum()) for b in np.flatnonzero(rows)]


def test_slice_masks() -> None:
    for count in ("official", "ratio"):
        m = slice_mask(200, 7, 5, np.random.default_rng(0), network_count=count)
        rows, ks = _network_rows(m)
        # official randint(max(1, ⌊7·0.65⌋), min(7, ⌊7·0.85⌋)) = randint(4, 5) → 4; ratio ⌊r·7⌋ → 4 or 5
        assert set(ks) == ({4} if count == "official" else {4, 5})
        for b in np.flatnonzero(~rows):
            cols = np.flatnonzero(m[b].all(axis=0))
            assert len(cols) in (3, 4) and np.all(np.diff(cols) == 1)  # ⌈r·5⌉ − 1 contiguous patches
            assert m[b].sum() == 7 * len(cols)
        assert 0.3 < rows.mean() < 0.7


def test_network_mask_counts_match_the_official_masker() -> None:
    # hand computation of the official network_masker: lo = max(1, int(N·0.65)), randint(lo, min(N, int(N·0.85)))
    assert network_mask_counts(9, (0.65, 0.85)) == (5, 6)  # int(5.85) = 5, int(7.65) = 7 → {5, 6}
    assert network_mask_counts(10, (0.65, 0.85)) == (6, 7)  # int(6.5) = 6, int(8.5) = 8 → {6, 7}
    assert network_mask_counts(7, (0.65, 0.85)) == (4, 4)
    assert network_mask_counts(2, (0.65, 0.85)) == (1, 1)  # official randint(1, 1) raises: lo alone
    assert network_mask_counts(8, (0.125, 0.5)) == (1, 3)  # the official default range: randint(1, 4)
    official = _network_rows(slice_mask(400, 9, 5, np.random.default_rng(1)))[1]
    ratio = _network_rows(slice_mask(400, 9, 5, np.random.default_rng(1), network_count="ratio"))[1]
    assert set(official) == {5, 6} and abs(np.mean(official) - 5.5) < 0.15  # uniform over {5, 6}
    assert set(ratio) == {5, 6, 7}


def test_encoder_matches_the_official_init() -> None:
    torch.manual_seed(5)
    enc = SemantoksEncoder(GROUPS, dim=512, depth=1, heads=2, patch=16, patches=2)
    assert _qkv(enc).bias is None  # official Attention: nn.Linear(dim, 3·dim, bias=False)
    std = float(enc.mask_token.detach().std())
    assert 0.018 < std < 0.022 and abs(float(enc.mask_token.detach().mean())) < 0.003  # N(0, 0.02²)
    old = SemantoksEncoder(GROUPS, dim=8, depth=1, heads=2, patch=16, patches=2, qkv_bias=True, mask_std=0.0)
    assert _qkv(old).bias is not None and torch.equal(old.mask_token.detach(), torch.zeros(8))
    with pytest.raises(ValueError, match="mask_std"):
        SemantoksEncoder(GROUPS, dim=8, depth=1, heads=2, patch=16, patches=2, mask_std=-1.0)


def test_pretrainer_loss_and_backward() -> None:
    torch.manual_seed(3)
    enc = SemantoksEncoder(GROUPS, dim=8, depth=1, heads=2, patch=16, patches=2)
    model = SemantoksPretrainer(enc, head_hidden=16, proj_dim=4)
    views = torch.randn(2, 6, 10, 32)
    masks = torch.from_numpy(np.stack([slice_mask(6, 3, 2, np.random.default_rng(i)) for i in range(2)]))
    loss, parts = model(views, masks, 0.5)
    assert set(parts) == {"cls", "ttr", "tok", "loss"}
    assert parts["loss"] == pytest.approx(parts["cls"] + 0.5 * parts["ttr"] + 0.5 * parts["tok"], rel=1e-5)
    loss.backward()
    assert all(p.grad is None for p in model.teacher.parameters())
    assert model.student.mask_token.grad is not None
    _, no_ttr = model(views, None, 0.0)
    assert set(no_ttr) == {"cls", "loss"}


def test_mae_baseline_and_augment() -> None:
    torch.manual_seed(4)
    mae = MaskedAutoencoder(10, dim=8, depth=1, heads=2, patch=16, patches=2)
    x = torch.randn(4, 10, 32)
    loss = mae(x, torch.Generator().manual_seed(0))
    assert loss.ndim == 0 and loss.item() > 0
    assert mae.features(x).shape == (4, 16)
    a = augment(np.ones((3, 10, 32), dtype=np.float32), np.random.default_rng(0), noise=0.0, scale=(2.0, 2.0))
    assert a.shape == (3, 10, 32) and set(np.unique(a)) <= {0.0, 2.0}
