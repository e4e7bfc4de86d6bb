"""The reference-free diagnostic of the discrimination experiment: the rank AUC of the targets' mean H equals
scikit-learn's ROC AUC, is far from 0.5 on the planted control and near 0.5 when both sides share a distribution."""

from __future__ import annotations

import dataclasses

import torch
from sklearn.metrics import roc_auc_score

from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS
from iclr26_theory_metrics.methods.hsic_unlearning.train import Protocol, control_study, discrimination, rank_auc


def test_rank_auc_is_the_roc_auc() -> None:
    gen = torch.Generator().manual_seed(0)
    pos = torch.randint(0, 6, (17,), generator=gen).double().tolist()  # small integers: many ties
    neg = (torch.randint(0, 6, (23,), generator=gen).double() - 1).tolist()
    expected = roc_auc_score([1] * len(pos) + [0] * len(neg), pos + neg)
    assert abs(rank_auc(pos, neg) - expected) < 1e-12
    assert rank_auc([1.0, 2.0], [0.0]) == 1.0 and rank_auc([0.0], [1.0, 2.0]) == 0.0 and rank_auc([1.0], [1.0]) == 0.5


def test_auc_separates_the_planted_control() -> None:
    res = control_study(PRESETS["smoke"], seed=0)
    assert abs(res["auc_mean_h"] - 0.5) >= 0.4  # collapsed in-training features give a different H throughout
    assert res["mean_h_in"] != res["mean_h_out"]


def test_auc_near_half_without_an_effect() -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], n_targets=20)
    gen = torch.Generator().manual_seed(1)
    code = torch.randn(10, 16, generator=gen, dtype=torch.float64)

    def pool(n: int) -> torch.Tensor:  # the same distribution on both sides
        return code[torch.arange(n) % 10] + torch.randn(n, 16, generator=gen, dtype=torch.float64)

    res = discrimination(
        Protocol(cfg, gen), 32, it_pool=pool(200), oot_pool=pool(200), it_ref_pool=pool(100), oot_ref_pool=pool(100)
    )
    assert abs(res["auc_mean_h"] - 0.5) < 0.3
