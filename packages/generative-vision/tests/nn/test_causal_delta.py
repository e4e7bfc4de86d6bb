"""Causal delta embeddings: δ of identical images is zero, SupCon against a hand-computed case and its loop
twin (values and gradients), Top-K patch selection, the sparsity and block-invariance losses."""

from __future__ import annotations

import math

import pytest
import torch

from iclr26_generative_vision.nn.causal_delta import (
    CausalDeltaEncoder,
    CausalDeltaModel,
    PairBaseline,
    SmallCNN,
    block_invariance_loss,
    l1_sparsity,
    naive_supcon_loss,
    supcon_loss,
    top_k_patches,
    verb_blocks,
)


@pytest.mark.parametrize("mode", ["global", "patch"])
def test_delta_of_identical_images_is_zero_and_shapes(mode: str) -> None:
    torch.manual_seed(0)
    model = CausalDeltaModel(CausalDeltaEncoder(SmallCNN((8, 16)), 12, 16, mode), 7, top_k=3).train()  # type: ignore[arg-type]
    x = torch.randn(5, 3, 16, 16)
    out = model(x, x.clone())
    assert out["delta"].shape == (5, 12) and out["logits"].shape == (5, 7)
    assert torch.equal(out["delta"], torch.zeros_like(out["delta"]))
    if mode == "patch":
        assert out["patches"].shape == (5, 3, 12)
    y = x.clone()
    y[:, :, :4, :4] += 1.0
    assert out["delta"].abs().sum() < model(x, y)["delta"].abs().sum()


def test_baseline_delta_is_zero_for_identical_images_and_critic_reverses_gradients() -> None:
    torch.manual_seed(0)
    model = PairBaseline(SmallCNN((8,)), 7, proj_dim=8, critic_classes=4)
    x = torch.randn(3, 3, 8, 8)
    out = model(x, x)
    assert torch.equal(out["delta"], torch.zeros(3, 8)) and out["critic"].shape == (3, 4)
    d = torch.randn(3, 8, requires_grad=True)
    from iclr26_generative_vision.nn.causal_delta import GradReverse

    GradReverse.apply(d, 2.0).sum().backward()  # pyright: ignore[reportOptionalMemberAccess]
    assert torch.equal(d.grad, torch.full((3, 8), -2.0))  # pyright: ignore[reportArgumentType]


def test_supcon_matches_a_hand_computed_case() -> None:
    z = torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])
    labels = torch.tensor([0, 0, 1])
    # anchors 0 and 1: s_01 = 1, s_02 = s_12 = 0 → −log(e / (e + 1)); anchor 2 has no positive
    expected = math.log(1 + math.exp(-1.0))
    assert supcon_loss(z, labels, temperature=1.0).item() == pytest.approx(expected, rel=1e-6)
    # τ = 0.5 doubles the logits: −log(e² / (e² + 1))
    assert supcon_loss(z, labels, temperature=0.5).item() == pytest.approx(math.log(1 + math.exp(-2.0)), rel=1e-6)
    assert supcon_loss(z, torch.tensor([0, 1, 2])).item() == 0.0  # no positives at all


def test_supcon_matches_its_loop_twin_in_value_and_gradient() -> None:
    torch.manual_seed(1)
    z1 = torch.randn(10, 6, requires_grad=True)
    z2 = z1.detach().clone().requires_grad_(True)
    labels = torch.tensor([0, 1, 0, 2, 1, 1, 3, 0, 2, 2])
    fast, slow = supcon_loss(z1, labels, 0.2), naive_supcon_loss(z2, labels, 0.2)
    fast.backward()
    slow.backward()
    torch.testing.assert_close(fast, slow)
    torch.testing.assert_close(z1.grad, z2.grad)


def test_supcon_is_lower_for_clustered_than_for_mixed_deltas() -> None:
    labels = torch.tensor([0, 0, 1, 1])
    clustered = torch.tensor([[1.0, 0.1], [1.0, -0.1], [-1.0, 0.1], [-1.0, -0.1]])
    mixed = clustered[[0, 2, 1, 3]]
    assert supcon_loss(clustered, labels) < supcon_loss(mixed, labels)


def test_top_k_keeps_the_patches_with_the_largest_delta_norm() -> None:
    delta = torch.zeros(2, 6, 3)
    delta[0, [4, 1, 5], 0] = torch.tensor([5.0, 3.0, 1.0])
    delta[1, [0, 2, 3], 1] = torch.tensor([-4.0, 2.0, 9.0])
    sel, idx = top_k_patches(delta, 2)
    assert idx.tolist() == [[4, 1], [3, 0]]
    assert torch.equal(sel[0, :, 0], torch.tensor([5.0, 3.0])) and torch.equal(sel[1, :, 1], torch.tensor([9.0, -4.0]))
    with pytest.raises(ValueError, match="top_k"):
        top_k_patches(delta, 7)


def test_sparsity_and_block_invariance_losses() -> None:
    delta = torch.tensor([[1.0, -2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 0.0]])
    assert l1_sparsity(delta).item() == 3.0 and l1_sparsity(delta, "mean").item() == 0.75
    # 2 blocks of 2 dims; sample 0 is in block 1 (dims 2, 3): only its dims 0, 1 count; mean over all 8 entries
    p1 = torch.zeros(2, 4)
    loss = block_invariance_loss(p1, delta, torch.tensor([1, 0]), 2)
    assert loss.item() == pytest.approx((1 + 4) / 8)
    # 5 dims in 2 blocks: d // K = 2 per block, the remainder (dim 4) joins the last block
    p2 = torch.ones(1, 5)
    assert block_invariance_loss(torch.zeros(1, 5), p2, torch.tensor([1]), 2).item() == pytest.approx(2 / 5)


def test_antonyms_share_an_sms_block() -> None:
    # verbs 0..6 with antonym pairs (0, 1), (2, 3), (4, 5): blocks 0 0 1 1 2 2 3
    assert verb_blocks(7, [(0, 1), (2, 3), (4, 5)]) == [0, 0, 1, 1, 2, 2, 3]
    assert verb_blocks(3, [(2, 0)]) == [0, 1, 0]
