"""The OpenMatch inference rule and the open-set metrics."""

import math

import torch

from iclr26_federated.nn.metrics import msp_predict, open_set_metrics, openmatch_predict


def test_openmatch_rule_rejects_when_outlier_prob_of_argmax_exceeds_half() -> None:
    p = torch.tensor([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
    q = torch.tensor(
        [
            [[-1.0, 1.0], [5.0, -5.0]],  # argmax 0, σ(q^0)_0 < .5 -> class 0 (q^1 ignored)
            [[5.0, -5.0], [1.0, 0.0]],  # argmax 1, σ(q^1)_0 > .5 -> unknown
            [[0.0, 0.0], [0.0, 0.0]],  # exactly 0.5 is not > 0.5 -> class 0
        ]
    )
    assert openmatch_predict(p, q).tolist() == [0, 2, 0]
    assert msp_predict(torch.tensor([[1.0, 1.0], [5.0, 0.0]]), 0.6).tolist() == [2, 0]


def test_open_set_metrics_hand_example() -> None:
    target = torch.tensor([0, 0, 1, 1, 2, 2])  # K = 2, label 2 = unknown
    closed = torch.tensor([0, 1, 1, 1, 0, 1])
    open_ = torch.tensor([0, 2, 1, 2, 2, 0])
    m = open_set_metrics(closed, open_, target, 2)
    assert math.isclose(m.closed_acc, 3 / 4)
    assert math.isclose(m.open_bacc, (0.5 + 0.5 + 0.5) / 3)
    assert math.isclose(m.unknown_recall, 0.5)
    assert math.isclose(m.known_recall, 0.5)
