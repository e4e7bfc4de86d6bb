"""Pseudo-label filtering rules, losses of a client batch, and server training on a tiny model."""

import dataclasses

import numpy as np
import torch

from iclr26_federated.methods.fedopenmatch.config import PRESETS, job_params
from iclr26_federated.methods.fedopenmatch.model import (
    client_loss,
    filter_pseudo_labels,
    make_model,
    make_pseudo_labels,
    train_server,
)


def _logit_pair(p_in: float) -> list[float]:
    """OVA pair (outlier, inlier) with σ(q)_1 = p_in."""
    return [0.0, float(np.log(p_in / (1 - p_in)))]


def test_pseudo_label_filter_rules() -> None:
    params = job_params(PRESETS["smoke"], "fedopenmatch", 0)  # tau_in .95, tau_pos .9, tau_neg .1
    p = torch.tensor([[6.0, 0.0], [6.0, 0.0], [0.5, 0.0], [0.0, 6.0]])
    q = torch.tensor(
        [
            [_logit_pair(0.95), _logit_pair(0.05)],  # confident + OVA inlier for ŷ=0 -> kept
            [_logit_pair(0.30), _logit_pair(0.50)],  # confident but OVA says outlier for ŷ=0 -> dropped
            [_logit_pair(0.99), _logit_pair(0.02)],  # OVA inlier but softmax conf < .95 -> dropped
            [_logit_pair(0.50), _logit_pair(0.70)],  # confident, OVA inlier for ŷ=1 -> kept
        ]
    )
    pl = filter_pseudo_labels(p, q, params)
    assert pl.label.tolist() == [0, 0, 0, 1]
    assert pl.keep.tolist() == [True, False, False, True]
    assert pl.ova_pos.tolist() == [[True, False], [False, False], [True, False], [False, False]]
    assert pl.ova_neg.tolist() == [[False, True], [False, False], [False, True], [False, False]]
    # without the inlier filter (FixMatch) only the confidence counts
    fix = dataclasses.replace(params, inlier_filter=False)
    assert filter_pseudo_labels(p, q, fix).keep.tolist() == [True, True, False, True]


def test_pseudo_labels_are_frozen_from_the_received_model() -> None:
    params = dataclasses.replace(job_params(PRESETS["smoke"], "fedopenmatch", 0), tau_in=0.0)
    model = make_model(params, 1)
    imgs = np.random.default_rng(0).integers(0, 256, (20, 12, 12), dtype=np.uint8)
    a = make_pseudo_labels(model, imgs, params)
    b = make_pseudo_labels(model, imgs, params)
    assert torch.equal(a.label, b.label) and torch.equal(a.keep, b.keep)


def test_client_loss_parts_and_server_training_reduces_loss() -> None:
    params = dataclasses.replace(job_params(PRESETS["smoke"], "fedopenmatch", 0), width=4, batch_size=16)
    model = make_model(params, 1)
    rng = np.random.default_rng(0)
    # two separable "classes" of images: dark and bright
    x = np.concatenate([rng.integers(0, 60, (20, 10, 10)), rng.integers(180, 256, (20, 10, 10))]).astype(np.uint8)
    y = np.array([0] * 20 + [1] * 20, dtype=np.int64)
    params = dataclasses.replace(params, known_classes=2)
    model = make_model(params, 1)
    gen = torch.Generator().manual_seed(0)
    first = train_server(model, x, y, params, 1, gen)
    later = np.mean([train_server(model, x, y, params, 1, gen) for _ in range(30)][-5:])
    assert later < first
    xb = torch.randn(4, 1, 10, 10)
    pl = filter_pseudo_labels(torch.randn(4, 2), torch.randn(4, 2, 2), dataclasses.replace(params, tau_in=0.0))
    loss, parts = client_loss(model, xb, xb + 0.1, pl, params)
    assert loss.ndim == 0 and set(parts) == {"l_in", "l_ova", "l_cons"} and parts["l_cons"] > 0
