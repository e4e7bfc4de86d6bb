"""Each loss against a hand-computed value; gradient stop; logit adjustment."""

import math

import pytest
import torch

from iclr26_federated.nn.losses import (
    binary_entropy_loss,
    logit_adjust,
    logit_consistency_loss,
    masked_cross_entropy,
    ova_loss,
    ova_pseudo_label_loss,
    softmax_consistency_loss,
)
from iclr26_federated.nn.models import build_model
from iclr26_shared.testing import assert_close


def _sig(a: float) -> float:
    return 1.0 / (1.0 + math.exp(-a))


def test_ova_loss_hand_value_uses_hardest_negative() -> None:
    # K = 3, one sample of class 0. Pair (outlier, inlier) logits per sub-classifier.
    q = torch.tensor([[[0.0, 2.0], [1.0, 0.0], [-1.0, 1.0]]], dtype=torch.float64)
    y = torch.tensor([0])
    pos = -math.log(_sig(2.0 - 0.0))  # -log σ(q^0)_1
    neg1 = -math.log(_sig(1.0 - 0.0))  # -log σ(q^1)_0
    neg2 = -math.log(_sig(-1.0 - 1.0))  # -log σ(q^2)_0  (the hard negative: larger)
    assert neg2 > neg1
    assert_close(ova_loss(q, y), torch.tensor(pos + neg2, dtype=torch.float64))


def test_ova_loss_batch_mean_and_errors() -> None:
    q = torch.randn(5, 4, 2, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 3, 1])
    each = torch.stack([ova_loss(q[i : i + 1], y[i : i + 1]) for i in range(5)])
    assert_close(ova_loss(q, y), each.mean())
    with pytest.raises(ValueError, match=r"\[B, K, 2\]"):
        ova_loss(torch.randn(2, 3), y[:2])
    with pytest.raises(ValueError, match="K >= 2"):
        ova_loss(torch.randn(2, 1, 2), torch.zeros(2, dtype=torch.long))


def test_logit_adjust_values_and_decision_shift() -> None:
    k = 4
    q = torch.zeros(1, k, 2, dtype=torch.float64)
    omega = 1.5
    adj = logit_adjust(q, omega, +1)
    assert_close(adj[0, :, 0], torch.full((k,), omega * math.log((k - 1) / k), dtype=torch.float64))
    assert_close(adj[0, :, 1], torch.full((k,), omega * math.log(1 / k), dtype=torch.float64))
    # +1: inlier margin falls by ω·log(K-1); -1: rises by the same amount
    margin = lambda t: t[..., 1] - t[..., 0]  # noqa: E731
    assert_close(margin(adj), torch.full((1, k), -omega * math.log(k - 1), dtype=torch.float64))
    assert_close(margin(logit_adjust(q, omega, -1)), torch.full((1, k), omega * math.log(k - 1), dtype=torch.float64))
    assert_close(logit_adjust(q, 0.0, 1), q)
    with pytest.raises(ValueError, match="sign"):
        logit_adjust(q, 1.0, 0)


def test_logit_adjusted_training_pushes_raw_logits_toward_inlier() -> None:
    """Minimising the OVA loss of one sub-classifier on a 1:(K-1) inlier/outlier mix: the optimum raw
    margin is log(1/(K-1)) without LA and ≈ 0 (balanced) with ω = 1, sign +1 (Menon et al.)."""
    k = 5

    def fit(omega: float) -> float:
        m = torch.zeros(1, requires_grad=True)  # raw margin q_1 - q_0, shared by all sub-classifiers
        opt = torch.optim.LBFGS([m], max_iter=200, line_search_fn="strong_wolfe")
        targets = torch.eye(k)  # sample i is an inlier of sub-classifier i only: 1 inlier, K-1 outliers each

        def closure() -> torch.Tensor:
            opt.zero_grad()
            q = torch.stack([torch.zeros(k, k), m.expand(k, k)], -1)  # [B = K, K, 2]
            logp = torch.log_softmax(logit_adjust(q, omega, 1), -1)
            loss = -(targets * logp[..., 1] + (1 - targets) * logp[..., 0]).mean()
            loss.backward()
            return loss

        opt.step(closure)
        return float(m.detach())

    assert fit(0.0) == pytest.approx(math.log(1 / (k - 1)), abs=1e-3)
    # π for K = 5 is (4/5, 1/5): the adjusted optimum makes the raw margin exactly 0
    assert fit(1.0) == pytest.approx(0.0, abs=1e-3)


def test_ova_pseudo_label_loss_hand_value() -> None:
    q = torch.tensor([[[0.0, 1.0], [2.0, 0.0]], [[0.0, 0.0], [0.5, -0.5]]], dtype=torch.float64)
    pos = torch.tensor([[True, False], [False, False]])
    neg = torch.tensor([[False, True], [False, True]])
    expected = (-math.log(_sig(1.0)) - math.log(_sig(2.0)) - math.log(_sig(1.0))) / 3
    assert_close(ova_pseudo_label_loss(q, pos, neg), torch.tensor(expected, dtype=torch.float64))
    none = torch.zeros(2, 2, dtype=torch.bool)
    assert float(ova_pseudo_label_loss(q, none, none)) == 0.0
    with pytest.raises(ValueError, match="both"):
        ova_pseudo_label_loss(q, pos, pos)


def test_entropy_and_consistency_hand_values() -> None:
    q = torch.tensor([[[0.0, 0.0], [math.log(3.0), 0.0]]], dtype=torch.float64)  # probs (.5,.5), (.75,.25)
    h = lambda a: -(a * math.log(a) + (1 - a) * math.log(1 - a))  # noqa: E731
    assert_close(binary_entropy_loss(q), torch.tensor((h(0.5) + h(0.75)) / 2, dtype=torch.float64))
    q2 = torch.zeros_like(q)
    # SOCR: sum over k, j of squared probability differences: (.25² + .25²) for k = 1
    assert_close(softmax_consistency_loss(q, q2), torch.tensor(0.125, dtype=torch.float64))
    p1 = torch.tensor([[1.0, 3.0]], dtype=torch.float64)
    p2 = torch.tensor([[0.0, 1.0]], dtype=torch.float64)
    # LCR: mse over the 4 OVA logits + mse over the 2 inlier logits
    expected = math.log(3.0) ** 2 / 4 + (1.0 + 4.0) / 2
    assert_close(logit_consistency_loss(p1, q, p2, q2), torch.tensor(expected, dtype=torch.float64))


def test_masked_cross_entropy_normalises_by_batch() -> None:
    logits = torch.tensor([[0.0, 0.0], [2.0, 0.0]], dtype=torch.float64)
    target = torch.tensor([0, 0])
    mask = torch.tensor([False, True])
    expected = -math.log(math.exp(2) / (math.exp(2) + 1)) / 2
    assert_close(masked_cross_entropy(logits, target, mask), torch.tensor(expected, dtype=torch.float64))


@pytest.mark.parametrize("gradient_stop", [True, False])
def test_gradient_stop_blocks_ova_gradients_into_extractor(gradient_stop: bool) -> None:
    model = build_model("cnn", 1, 3, 4, seed=0)
    x = torch.randn(4, 1, 12, 12)
    _, q = model(x, gradient_stop=gradient_stop)
    ova_loss(q, torch.tensor([0, 1, 2, 0])).backward()
    ext = [p.grad for p in model.extractor.parameters()]
    assert model.ova_head.weight.grad is not None and float(model.ova_head.weight.grad.abs().sum()) > 0
    assert model.inlier_head.weight.grad is None
    if gradient_stop:
        assert all(g is None for g in ext)
    else:
        assert any(g is not None and float(g.abs().sum()) > 0 for g in ext)
