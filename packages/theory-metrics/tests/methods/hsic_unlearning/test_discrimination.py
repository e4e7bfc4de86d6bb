"""The reference-free diagnostic of the discrimination experiment: the rank AUC of the targets' mean H equals
scikit-learn's ROC AUC, is far from 0.5 on the planted control and near 0.5 when both sides share a distribution;
the placebo AUC between two unseen pools reads a pool difference;
pooled references drawn with overlap (``reference_overlap``) fit pools too small for disjoint ones."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch
from sklearn.metrics import roc_auc_score

from iclr26_shared.testing import run_cli
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS
from iclr26_theory_metrics.methods.hsic_unlearning.train import (
    Protocol,
    _references,  # pyright: ignore[reportPrivateUsage]
    control_study,
    discrimination,
    rank_auc,
)


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
        Protocol(cfg, 1), 32, it_pool=pool(200), oot_pool=pool(200), it_ref_pool=pool(100), oot_ref_pool=pool(100)
    )
    assert abs(res["auc_mean_h"] - 0.5) < 0.3


def test_placebo_auc_reads_a_difference_between_two_unseen_pools() -> None:
    """``auc_placebo`` compares subsets of the out-of-training reference pool with the unseen targets: near 0.5 when
    the two pools are drawn alike, far from it when they differ (a pool effect, no membership involved); its
    subsets are keyed apart, so every other number of the draw is what it was without them."""
    cfg = dataclasses.replace(PRESETS["smoke"], n_targets=20)
    gen = torch.Generator().manual_seed(2)
    code = torch.randn(10, 16, generator=gen, dtype=torch.float64)

    def pool(n: int, noise: float = 1.0) -> torch.Tensor:
        return code[torch.arange(n) % 10] + noise * torch.randn(n, 16, generator=gen, dtype=torch.float64)

    it, it_ref, oot = pool(200), pool(100), pool(200)
    same = discrimination(Protocol(cfg, 1), 32, it_pool=it, oot_pool=oot, it_ref_pool=it_ref, oot_ref_pool=pool(100))
    wide = discrimination(
        Protocol(cfg, 1), 32, it_pool=it, oot_pool=oot, it_ref_pool=it_ref, oot_ref_pool=pool(100, noise=1.5)
    )
    assert abs(same["auc_placebo"] - 0.5) < 0.3
    assert wide["auc_placebo"] > 0.9  # a wider unseen pool: a higher H throughout
    # the placebo subsets come last and are keyed apart: the targets' statistics are those of the same draws
    assert same["mean_h_in"] == wide["mean_h_in"] and same["mean_h_out"] == wide["mean_h_out"]


def test_overlapping_references_fit_a_small_pool() -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], reference_subsets=8, reference_overlap=True)
    refs = _references(50, 20, cfg, torch.Generator().manual_seed(0))  # 8 × 20 > 50: only with overlap
    assert len(refs) == 8 and all(r.numel() == 20 and r.unique().numel() == 20 and int(r.max()) < 50 for r in refs)
    disjoint = _references(200, 20, dataclasses.replace(cfg, reference_overlap=False), torch.Generator())
    assert torch.cat(disjoint).unique().numel() == 8 * 20


def test_reference_overlap_through_the_cli(tmp_path: Path) -> None:
    """Twenty references of 32 do not fit the smoke preset's 150-image reference half disjointly (one line, exit 2,
    naming the switch), and do with ``--reference-overlap``."""
    args = ["hsic-unlearning", "--preset", "smoke", "--device", "cpu", "--quiet", "--reference-subsets", "20"]
    res = run_cli(cli.main, [*args, "--out-dir", str(tmp_path / "a")])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "reference_overlap" in res.err
    res = run_cli(
        cli.main, [*args, "--reference-overlap", "--unlearning", "mia-fool", "--out-dir", str(tmp_path / "b")]
    )
    assert res.code == 0, res.err
    (run_path,) = (tmp_path / "b" / "hsic-unlearning").iterdir()
    results = json.loads((run_path / "results.json").read_text())
    assert set(results["models"]) == {"original", "retrain", "mia-fool"} and len(results["claims"]) == 9
