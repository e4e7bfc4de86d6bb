"""The validity diagnostic (``methods/hsic_unlearning/diagnose.py``): it rebuilds a saved run's sets and draws exactly
(its as-run OTRs equal the run's), its noise measurements equal independent computations, and bad input is a
one-line error naming the argument."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon

from iclr26_shared.errors import UsageError
from iclr26_shared.images import load_image_tensors
from iclr26_shared.testing import run_cli
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS
from iclr26_theory_metrics.methods.hsic_unlearning.diagnose import (
    diagnose_features,
    diagnose_run,
    diagnose_spare,
    main,
    pool_levels,
    shuffle_noise,
)
from iclr26_theory_metrics.methods.hsic_unlearning.train import rank_auc
from iclr26_theory_metrics.ops.hsic import split_half_dependence, split_half_mean

SMOKE = PRESETS["smoke"]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("diag")
    args = ["hsic-unlearning", "--preset", "smoke", "--device", "cpu", "--quiet", "--out-dir", str(out)]
    res = run_cli(cli.main, args)
    assert res.code == 0, res.err
    (run_path,) = (out / "hsic-unlearning").iterdir()
    return run_path, json.loads((run_path / "results.json").read_text())


def test_the_as_run_variant_reproduces_the_runs_otr_exactly(smoke_run: tuple[Path, dict[str, Any]]) -> None:
    run_path, results = smoke_run
    d = diagnose_run(run_path, count=4)
    for name in ("original", "retrain"):
        got = d["variants"]["as-run"][name]
        assert got["otr_draws"] == results["models"][name]["otr_draws"]
        assert got["otr"] == results["models"][name]["otr"]
        assert got["mean_jsd_it"] == pytest.approx(results["models"][name]["mean_jsd_it"], abs=1e-15)
    diff = d["variants"]["as-run"]["retrain_minus_original"]["mean"]
    assert diff == pytest.approx(results["models"]["retrain"]["otr"] - results["models"]["original"]["otr"])
    assert set(d["variants"]) == {"as-run", "mann-whitney", "bins-10", "sigma-median", "references-4"}
    for m in d["models"].values():
        assert set(m["levels"]) <= {"forget", "it_ref", "oot_ref", "unseen"} and m["noise"]["shuffle_cv"] > 0


def _feats(n: int = 120, d: int = 6, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.float64) * torch.linspace(0.5, 2.0, d, dtype=torch.float64)


def test_pool_levels_are_the_closed_form_means_of_the_drawn_subsets() -> None:
    cfg = dataclasses.replace(SMOKE, subset_size=40)
    pools = {"a": _feats(), "small": _feats(30)}
    out = pool_levels(pools, 40, 5, cfg=cfg, generator=torch.Generator().manual_seed(3))
    assert set(out) == {"a"}  # a pool smaller than |S| is left out
    g = torch.Generator().manual_seed(3)
    vals = []
    for _ in range(5):
        idx = torch.randperm(120, generator=g)[:40]
        vals.append(split_half_mean(pools["a"], idx, generator=g))
    assert out["a"]["mean"] == pytest.approx(float(np.mean(vals)), rel=1e-12)
    assert out["a"]["sd"] == pytest.approx(float(np.std(vals, ddof=1)), rel=1e-12)


def test_shuffle_noise_equals_an_independent_histogram_jsd() -> None:
    cfg = dataclasses.replace(SMOKE, n_shuffles=50, jsd_bins=8)
    feats = _feats()
    out = shuffle_noise(feats, 40, 1, cfg=cfg, generator=torch.Generator().manual_seed(5))
    g = torch.Generator().manual_seed(5)
    idx = torch.randperm(120, generator=g)[:40]
    h = split_half_dependence(feats, idx, 100, generator=g).numpy()
    a, b = h[:50], h[50:]
    edges = np.linspace(h.min(), h.max(), 9)
    pa, _ = np.histogram(a, edges)
    pb, _ = np.histogram(b, edges)
    assert out["jsd_floor"] == pytest.approx(jensenshannon(pa, pb, base=2) ** 2, abs=1e-12)
    assert out["shuffle_cv"] == pytest.approx(float(a.std(ddof=1) / a.mean()), rel=1e-12)
    # two sets of shuffles of one subset are one distribution: the floor is small but not 0 (histogram noise)
    assert 0.0 < out["jsd_floor"] < 0.5


def test_gaps_are_in_units_of_the_subset_and_shuffle_sd() -> None:
    cfg = dataclasses.replace(SMOKE, subset_size=40, n_shuffles=40)
    f = {"forget": _feats(seed=1), "it_ref": _feats(seed=2) * 1.3, "oot_ref": _feats(seed=3), "unseen": _feats(seed=4)}
    out = diagnose_features(cfg, 0, {"m": f}, count=6)
    m = out["models"]["m"]
    gap = m["levels"]["it_ref"]["mean"] - m["levels"]["oot_ref"]["mean"]
    assert gap > 0  # wider features, higher level of H
    assert m["gap_in_subset_sd"] == pytest.approx(gap / m["levels"]["it_ref"]["sd"])
    assert m["gap_in_shuffle_sd"] == pytest.approx(gap / (m["noise"]["shuffle_cv"] * m["levels"]["it_ref"]["mean"]))
    lv = m["levels"]
    assert m["auc_forget_unseen"] == rank_auc(lv["forget"]["values"], lv["unseen"]["values"])
    assert m["auc_placebo"] == rank_auc(lv["oot_ref"]["values"], lv["unseen"]["values"])
    assert out["variants"] == {}  # no original / retrain pair: no OTR
    with pytest.raises(UsageError, match=r"feats\['m'\]: missing pool"):
        diagnose_features(cfg, 0, {"m": {"forget": f["forget"]}})


def test_spare_images_join_the_unseen_pools() -> None:
    cfg = dataclasses.replace(SMOKE, epochs=2, subset_size=32)
    out = diagnose_spare(cfg, 0, 600, variants={"as-run": {}}, count=3)
    data = load_image_tensors("digits", scale="standardize")
    assert out["n_forget"] == 60  # R = 10 % of the 600 trained on
    assert out["n_unseen"] == data.x_train.shape[0] - 600 + data.x_test.shape[0]  # the spare images + the test split
    assert set(out["variants"]) == {"as-run"} and 0.0 <= out["variants"]["as-run"]["original"]["otr"] <= 1.0
    assert all(0.0 <= a["test"] <= 1.0 for a in out["accuracy"].values())
    with pytest.raises(UsageError, match="n_train"):
        diagnose_spare(cfg, 0, 10**6)


def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: run_dir:") and "config.json" in err and "\n" not in err
    assert main([]) == 2
    assert "run directories" in capsys.readouterr().err
    (tmp_path / "config.json").write_text(json.dumps({"method": "richness", "seed": 0, "config": {}}))
    assert main([str(tmp_path)]) == 2
    assert "expected 'hsic-unlearning'" in capsys.readouterr().err
