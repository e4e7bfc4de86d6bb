"""Pseudo-label filtering rules, losses of a client batch, and server training on a tiny model."""

import dataclasses

import numpy as np
import pytest
import torch

from iclr26_federated.methods.fedopenmatch.config import PRESETS, job_params
from iclr26_federated.methods.fedopenmatch.model import (
    PseudoLabels,
    client_loss,
    filter_pseudo_labels,
    make_model,
    make_pseudo_labels,
    pseudo_label_stats,
    train_client,
    train_server,
)
from iclr26_federated.methods.fedopenmatch.train import pseudo_label_row


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


def test_pseudo_label_stats_pass_rate_precision_and_unknowns() -> None:
    params = job_params(PRESETS["smoke"], "fedopenmatch", 0)  # K = 6: label 6 = unknown
    pl = PseudoLabels(
        label=torch.tensor([0, 1, 2, 3]),
        keep=torch.tensor([True, True, True, False]),
        ova_pos=torch.zeros(4, 6, dtype=torch.bool),
        ova_neg=torch.zeros(4, 6, dtype=torch.bool),
        conf=torch.tensor([0.99, 0.97, 0.96, 0.5]),
    )
    stats = pseudo_label_stats(pl, params, np.array([0, 2, 6, 3]))  # right, wrong, unknown, dropped
    assert stats == {
        "pl_pass_rate": 0.75,
        "pl_conf_rate": 0.75,
        "pl_conf": stats["pl_conf"],
        "pl_correct_rate": 0.25,
        "pl_unknown_rate": 0.25,
    }
    assert abs(stats["pl_conf"] - (0.99 + 0.97 + 0.96 + 0.5) / 4) < 1e-6
    # precision over clients = Σ correct / Σ pass, from FedAvg's num-examples-weighted means
    row = pseudo_label_row({"pl_pass_rate": 0.5, "pl_correct_rate": 0.4, "pl_unknown_rate": 0.05, "pl_conf": 0.7})
    assert row["pl_precision"] == 0.8 and row["pl_unknown_share"] == 0.1
    assert pseudo_label_row({"pl_pass_rate": 0.0, "pl_correct_rate": 0.0})["pl_precision"] is None


def test_openmatch_baseline_uses_two_weak_views_and_a_fixmatch_start_delay() -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], width=4, openmatch_fix_start=1)
    om = job_params(cfg, "fedavg-openmatch", 0)
    assert (om.cons_views, om.fix_start) == ("weak-weak", 1)
    ours = job_params(cfg, "fedopenmatch", 0)
    assert (ours.cons_views, ours.fix_start) == ("weak-strong", 0)
    assert job_params(cfg, "no-lcr", 0).cons_views == "weak-strong"  # the ablation swaps only the regulariser
    model = make_model(om, 1)
    torch.manual_seed(0)
    xw, xs = torch.randn(4, 1, 12, 12), torch.randn(4, 1, 12, 12)
    pl = filter_pseudo_labels(torch.randn(4, 6) * 10, torch.randn(4, 6, 2), dataclasses.replace(om, tau_in=0.0))
    with pytest.raises(ValueError, match="second weak view"):
        client_loss(model, xw, xs, pl, om)
    # SOCR between the two weak views: identical weak views give zero consistency whatever the strong view
    _, same = client_loss(model, xw, xs, pl, om, xw2=xw.clone())
    assert same["l_cons"] == 0.0 and same["l_in"] > 0
    _, other = client_loss(model, xw, xs, pl, om, xw2=xw + 0.5)
    assert other["l_cons"] > 0
    # before the start round the FixMatch term is off
    _, delayed = client_loss(model, xw, xs, pl, om, xw2=xw.clone(), use_fix=False)
    assert delayed["l_in"] == 0.0 and delayed["l_ova"] == same["l_ova"]
    imgs = np.random.default_rng(0).integers(0, 256, (12, 12, 12), dtype=np.uint8)
    r1 = train_client(make_model(om, 1), imgs, om, torch.Generator().manual_seed(0), server_round=1)
    r2 = train_client(make_model(om, 1), imgs, om, torch.Generator().manual_seed(0), server_round=2)
    assert r1["l_in"] == 0.0 and "partition-id" not in r1
    assert r2["pl_pass_rate"] == r1["pl_pass_rate"]
