"""Our generator and losses pinned against GFMA's (siriuslay/GFMA) formulas, re-derived here on fixed inputs."""

from __future__ import annotations

import dataclasses
import math
from typing import cast

import pytest
import torch

from iclr26_graphs.data.graph_domains import make_domains
from iclr26_graphs.methods.ogmm import MergeConfig, MergedGNN
from iclr26_graphs.methods.ogmm import train as ogmm_train
from iclr26_graphs.methods.ogmm.config import PRESETS
from iclr26_graphs.methods.ogmm.model import (
    DenseExpert,
    GraphInverter,
    bn_matching_loss,
    gfma_adjacency,
    mask_regulariser,
)


def test_gfma_edge_sampler_is_threshold_then_hard_gumbel_softmax() -> None:
    probs = torch.tensor([[[0.0, 0.95, 0.5], [0.95, 0.0, 0.91], [0.5, 0.91, 0.0]]]).requires_grad_()
    got = gfma_adjacency(probs, 0.1, torch.Generator().manual_seed(3))
    # GFMA, step by step: a' = a·[a > 0.9]; Gumbel noise per (pair, class); hard one-hot of (1 − a', a') + g
    u = torch.rand((1, 3, 3, 2), generator=torch.Generator().manual_seed(3)).clamp(1e-10, 1 - 1e-10)
    g = -torch.log(-torch.log(u))
    a = probs.detach() * (probs.detach() > 0.9)
    want = ((a + g[..., 1]) > (1 - a + g[..., 0])).float() * (1 - torch.eye(3))
    assert torch.equal(got.detach(), want)
    got.sum().backward()  # straight-through: the gradient reaches the probabilities
    assert probs.grad is not None and float(probs.grad.abs().sum()) > 0
    # the edge law: P(edge) = σ(a' − (1 − a')) = σ(2a' − 1), whatever τ: 0.269 below the threshold (not 0)
    many = torch.tensor([0.5, 0.95]).view(1, 1, 2).expand(20000, 2, 2).contiguous()
    draws = gfma_adjacency(many, 0.1, torch.Generator().manual_seed(0))
    rate_low, rate_high = float(draws[:, 1, 0].mean()), float(draws[:, 0, 1].mean())
    sigmoid = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
    assert rate_low == pytest.approx(sigmoid(-1.0), abs=0.015)  # a = 0.5 thresholded to 0
    assert rate_high == pytest.approx(sigmoid(2 * 0.95 - 1), abs=0.015)


def test_gfma_bn_form_is_deepinversions_unsquared_norms() -> None:
    torch.manual_seed(0)
    expert = DenseExpert("gcn", 4, 6, 2).eval()
    for bn in expert.bns:
        assert isinstance(bn, torch.nn.BatchNorm1d)
        bn.running_mean.normal_()  # pyright: ignore[reportOptionalMemberAccess]
        bn.running_var.uniform_(0.5, 2)  # pyright: ignore[reportOptionalMemberAccess]
    inputs = [torch.randn(11, 6) * 2 + 1, torch.randn(11, 6)]
    stats = [(cast(torch.Tensor, bn.running_mean), cast(torch.Tensor, bn.running_var)) for bn in expert.bns]
    want = 0.0
    for (rm, rv), h in zip(stats, inputs, strict=True):
        mean, var = h.mean(0), ((h - h.mean(0)) ** 2).mean(0)  # biased, as GFMA's hook
        want += float(((rv - var) ** 2).sum().sqrt() + ((rm - mean) ** 2).sum().sqrt())
    assert float(bn_matching_loss(expert, inputs, "norm")) == pytest.approx(want, rel=1e-6)
    squared = sum(
        float(((h.mean(0) - rm) ** 2).sum() + ((h.var(0) - rv) ** 2).sum())
        for (rm, rv), h in zip(stats, inputs, strict=True)
    )
    assert float(bn_matching_loss(expert, inputs)) == pytest.approx(squared, rel=1e-6)


def test_gfma_mask_regulariser_with_t_and_eta() -> None:
    w = torch.tensor([[1.0, 0.9, 0.3], [1.25, 0.5, 1.1]])
    b = torch.tensor([0.0, 1.0])
    # GFMA's RegLoss (mask_loss = 100) per mask tensor: |mean − η| + |share within t of 1 − η|
    want = (abs(w.mean().item() - 0.5) + abs(3 / 6 - 0.5)) + (abs(0.5 - 0.5) + abs(1 / 2 - 0.5))
    assert float(mask_regulariser([w, b], "gfma", 0.2, 0.5)) == pytest.approx(want)
    assert float(mask_regulariser([w, b], "l2")) == pytest.approx(float(((w - 1) ** 2).mean() + ((b - 1) ** 2).mean()))


def test_features_sum_gate_reads_the_summed_raw_features() -> None:
    torch.manual_seed(0)
    experts = [DenseExpert("gcn", 3, 4, 2).eval() for _ in range(3)]
    model = MergedGNN(experts, 3, 2, gate_input="features-sum").eval()
    with torch.no_grad():
        model.w_gate.normal_()
    x, adj = torch.randn(2, 5, 3), torch.zeros(2, 5, 5)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    logits = (x * mask[..., None]).sum(1) @ model.w_gate
    top = logits.topk(2, -1)
    want = torch.full_like(logits, float("-inf")).scatter(-1, top.indices, top.values).softmax(-1)
    torch.testing.assert_close(model.gates(x, adj, mask), want)


def test_the_gfma_switches_run_end_to_end() -> None:
    split = make_domains("motifs", seed=0, per_domain=16, target_size=8, nodes=(6, 8))
    cfg = dataclasses.replace(PRESETS["smoke"], expert_epochs=2, hidden=8)
    experts = [
        (f"gcn-{d}", ogmm_train.train_expert("gcn", s, 2, cfg, 0, 0))
        for d, s in (("A", split.a_train), ("B", split.b_train))
    ]
    gfma = MergeConfig(
        gen_graphs=4,
        gen_nodes=6,
        gen_epochs=3,
        tau=0.1,
        lambda_ce=10.0,
        bn_form="norm",
        edge_sampler="gfma",
        gate_input="features-sum",
        mask_reg="gfma",
        merge_epochs=1,
        top_k=1,
    )
    merged, generated = ogmm_train.merge_experts(experts, 2, gfma)
    assert merged.gate_input == "features-sum" and len(generated) == 8
    assert GraphInverter(2, 4, 3)(0.1, sampler="gfma")[1].shape == (2, 4, 4)
