"""The smoke preset of ``richness`` through the CLI writes a complete run directory (curve rows per phase,
figures, report, claims); a bad flag exits 2 with one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from iclr26_shared.dryrun import dry_run
from iclr26_shared.testing import assert_models_roundtrip, assert_valid_run_dir, run_cli, smoke_run
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.richness.config import PRESETS
from iclr26_theory_metrics.methods.richness.spec import SPEC


def test_smoke_run_and_saved_models(tmp_path: Path) -> None:
    """One smoke run (the CLI path is exercised by the bad-flag test and the package's CLI tests): its run directory,
    and every saved network (the grokking transformer, the lazy and rich MLPs, both VGGs) loads back with outputs
    identical to the in-memory model's (logits and penultimate features)."""
    run, _ = smoke_run(SPEC, tmp_path)
    run_path = run.path
    results = assert_valid_run_dir(run_path)
    cfg = PRESETS["smoke"]
    rows = [json.loads(line) for line in (run_path / "metrics.jsonl").read_text().splitlines()]
    phases = [r["phase"] for r in rows]
    assert phases.count("grokking") == cfg.grok_steps // cfg.eval_every + 1
    assert phases.count("lazy") == phases.count("rich") == cfg.epochs + 1
    stress = [p for p in phases if p.startswith("stress")]
    assert len(stress) == (len(cfg.stress_weight_decays) + len(cfg.stress_target_scales)) * (cfg.epochs + 1)
    assert phases.count("vgg bn") == phases.count("vgg no bn") == cfg.vgg_epochs + 1
    steps = [r["step"] for r in rows]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    assert all(0.0 <= r["d_lr"] <= 1.0 for r in rows)
    g = results["grokking"]
    assert (
        g["init"]["step"] == 0
        and g["final"]["step"] == cfg.grok_steps
        and len(g["curve"]["d_lr"]) == len([p for p in phases if p == "grokking"])
    )
    assert len(results["claims"]) == 11
    assert all(c["verdict"] in ("holds", "fails", "inconclusive") for c in results["claims"])
    figures = {p.name for p in (run_path / "figures").iterdir()}
    assert {"grokking_curve.png", "grokking_baselines.png", "lazy_rich.png", "rich_spectrum.png"} <= figures
    assert "## Grokking" in (run_path / "report.md").read_text()
    assert "## Batch norm" in (run_path / "report.md").read_text()
    assert set(run.saved_models) == {"grokking", "lazy", "rich", "vgg-bn", "vgg-no-bn"}
    tokens = torch.tensor([[1, 2, cfg.modulus], [3, 4, cfg.modulus]])
    flat = torch.linspace(-2, 2, 2 * 64).reshape(2, 64)  # digits: 8×8 images, flattened for the MLP

    def probe(x: torch.Tensor):  # noqa: ANN202
        return lambda model: (model(x), model.features(x))

    probes = {"grokking": probe(tokens), "lazy": probe(flat), "rich": probe(flat)}
    probes |= {name: probe(flat.reshape(2, 1, 8, 8)) for name in ("vgg-bn", "vgg-no-bn")}
    assert_models_roundtrip(run, probes)


def test_bad_flag_exits_2(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["richness", "--preset", "smoke", "--heads", "5", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "heads" in res.err and len(res.err.strip().splitlines()) == 1


def test_dry_run_of_the_quick_preset() -> None:
    """``--dry-run`` builds the quick preset's networks at their sizes: the width-32 transformer on P = 23, the
    width-16 MLP (p = 128) on digits and the VGGs, and steps each once."""
    out = dry_run(SPEC, PRESETS["quick"], "cpu")
    per = out["parameters_per_network"]
    assert set(per) == {"grokking", "lazy", "rich", "vgg-bn", "vgg-no-bn"}
    assert per["lazy"] == 128 * 10 + 10  # only the last layer trains
    assert per["rich"] == 64 * 128 + 128 + 128 * 128 + 128 + 128 * 10 + 10
    assert out["parameters"] == sum(per.values()) and math.isfinite(out["train_loss"])


@pytest.mark.slow
def test_dry_run_of_the_full_preset() -> None:
    """The full preset (P = 97, width 128; MNIST-5k MLP of width 64, VGG of width 32) builds and steps."""
    out = dry_run(SPEC, PRESETS["full"], "cpu")
    assert out["parameters_per_network"]["rich"] == 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10
