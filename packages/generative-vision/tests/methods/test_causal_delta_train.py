"""The causal-delta trainer: a smoke CLI run writes a valid run directory, reuses the render cache and
resumes from its checkpoint; training lowers the loss; the δ-space cosines."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr26_generative_vision import cli
from iclr26_generative_vision.data.causal_triplet import VERBS, render_pairs
from iclr26_generative_vision.methods.causal_delta.config import PRESETS
from iclr26_generative_vision.methods.causal_delta.model import build_model, loss_terms, to_tensor, train_variant
from iclr26_generative_vision.methods.causal_delta.spec import SPEC
from iclr26_generative_vision.methods.causal_delta.train import action_cosines
from iclr26_shared.testing import (
    Arms,
    assert_models_roundtrip,
    assert_no_claim_holds,
    assert_valid_run_dir,
    run_cli,
    smoke_run,
)


def test_smoke_run_writes_a_valid_run_dir_and_resumes(tmp_path: Path) -> None:
    argv = ["causal-delta", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet"]
    run, results = smoke_run(SPEC, tmp_path)
    run_dir = run.path
    size = PRESETS["smoke"].image_size
    gen = torch.Generator().manual_seed(0)
    x0, x1 = torch.rand(2, 3, size, size, generator=gen), torch.rand(2, 3, size, size, generator=gen)
    assert_models_roundtrip(run, dict.fromkeys(run.saved_models, lambda m: m(x0, x1)))
    assert "comp-cde" in run.saved_models and "noun-vanilla" in run.saved_models
    chance = results["chance"]["comp"]["ood"]
    at_chance, worse = copy.deepcopy(results), copy.deepcopy(results)
    for split in ("comp", "noun"):
        c = results["chance"][split]
        for v in ("cde", "vanilla"):
            at_chance["accuracy"][split][v] = {"iid": c["iid"], "ood": c["ood"], "gap": 0.0}
        worse["accuracy"][split]["cde"] = {"iid": 0.0, "ood": 0.0, "gap": 0.0}
    worse["geometry"]["cde"]["antonym_pairwise"] = 0.5  # parallel antonyms: worse than no structure (0)
    # the arms compared here are the δ geometry (the smoke models' accuracies may already tie at chance)
    arms = [
        Arms(
            ours=["geometry/cde/antonym_pairwise"], others=["geometry/vanilla/antonym_pairwise"], trivial=0.0, worse=0.5
        )
    ]
    assert_no_claim_holds(SPEC, results, arms, extra_cases={"CDE and vanilla at chance": at_chance, "CDE worse": worse})
    assert chance > 0
    assert len(results["claims"]) == 9 and not results["pool"]["from_cache"]
    assert set(results["accuracy"]["comp"]) == set(PRESETS["smoke"].variants)
    assert set(results["accuracy"]["noun"]) == set(PRESETS["smoke"].variants) - {
        "cde-no-contrast",
        "cde-no-sparse",
        "cde-ce",
    }
    assert (run_dir / "figures" / "gap_comp.png").is_file() and (run_dir / "figures" / "delta_cosines.png").is_file()
    assert "Action accuracy, noun split" in (run_dir / "report.md").read_text()
    (run_dir / "results.json").unlink()  # as if stopped after the last checkpoint: --resume reloads every variant
    again = run_cli(cli.main, [*argv, "--resume"])
    assert again.code == 0, again.err
    resumed = assert_valid_run_dir(run_dir)
    assert resumed["pool"]["from_cache"] and resumed["accuracy"] == results["accuracy"]


@pytest.mark.parametrize("variant", ["cde", "cde-patch", "sms", "icm", "pair-concat"])
def test_every_variant_has_finite_loss_terms(variant: str) -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], patch_loss="per-patch")
    torch.manual_seed(0)
    model = build_model(cfg, variant)
    images, verbs, nouns = render_pairs(8, size=32, seed=0)
    x0, x1 = to_tensor(images, torch.device("cpu"))
    terms = loss_terms(cfg, variant, model(x0, x1), torch.from_numpy(verbs), torch.from_numpy(nouns))
    assert torch.isfinite(terms["loss"]) and terms["loss"] >= terms["ce"] - 1e-6 or variant == "icm"


def test_training_lowers_the_loss_on_a_small_pool() -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], epochs=6, batch_size=16)
    images, verbs, nouns = render_pairs(48, size=32, seed=1)
    torch.manual_seed(0)
    model = build_model(cfg, "cde")
    losses = train_variant(model, cfg, "cde", images, verbs, nouns, seed=0, device=torch.device("cpu"))
    assert np.mean(losses[-3:]) < np.mean(losses[:3])


def test_action_cosines_find_anti_parallel_antonyms() -> None:
    v = len(VERBS)
    verbs = np.repeat(np.arange(v), 3)
    base = np.eye(v + 1)[: v // 2 + 2]
    dirs = {0: base[0], 1: -base[0], 2: base[1], 3: -base[1], 4: base[2], 5: -base[2], 6: base[3]}
    deltas = np.stack([dirs[int(a)] for a in verbs])
    geo = action_cosines(deltas, verbs)
    assert geo["antonym_mean"] == pytest.approx(-1.0) and geo["other_mean"] == pytest.approx(0.0, abs=1e-12)
    assert geo["antonym_pairwise"] == pytest.approx(-1.0) and geo["within"] == pytest.approx(1.0)
    # scatter each sample around its action's direction: the mean-δ cosine stays −1, the pairwise one rises
    noisy = deltas + np.random.default_rng(0).normal(scale=2.0, size=deltas.shape)
    geo2 = action_cosines(noisy, verbs)
    assert geo2["antonym_pairwise"] > -0.9 and geo2["within"] < 0.9
    assert set(geo["antonyms"]) == {"open/close", "turn-on/turn-off", "move-left/move-right"}
