"""The smoke preset of ``hsic-unlearning`` through the CLI writes a complete run directory, the same seed twice gives
identical results, and ``--resume`` reuses the checkpointed original and retrained models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from iclr26_shared.dryrun import dry_run
from iclr26_shared.testing import assert_models_roundtrip, assert_valid_run_dir, run_cli, smoke_run
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS
from iclr26_theory_metrics.methods.hsic_unlearning.spec import SPEC

ARGS = ["hsic-unlearning", "--preset", "smoke", "--device", "cpu", "--quiet"]


def _rows(run_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_path / "metrics.jsonl").read_text().splitlines()]


def _run(out_dir: Path) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    """One smoke run: its directory, results and metric rows as they were when it finished."""
    res = run_cli(cli.main, [*ARGS, "--out-dir", str(out_dir)])
    assert res.code == 0, res.err
    (run_path,) = (out_dir / "hsic-unlearning").iterdir()
    return run_path, assert_valid_run_dir(run_path), _rows(run_path)


def _without_wall_time(results: dict[str, Any]) -> dict[str, Any]:
    """Results without the timing entries: the wall time and the shared runner's CPU-share measurement."""
    return {k: v for k, v in results.items() if k not in ("seconds", "machine")}


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    return _run(tmp_path_factory.mktemp("first"))


def test_smoke_cli_run_and_resume(first: tuple[Path, dict[str, Any], list[dict[str, Any]]]) -> None:
    run_path, results, rows = first
    cfg = PRESETS["smoke"]
    phases = [r["phase"] for r in rows]
    assert phases.count("train original") == phases.count("train retrain") == cfg.epochs
    assert [r["model"] for r in rows if r["phase"] == "eval"] == ["original", "retrain", *cfg.unlearning]
    assert phases.count("discrimination retrain") == len(cfg.f1_subset_sizes)
    steps = [r["step"] for r in rows]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    models = results["models"]
    assert set(models) == {"original", "retrain", *cfg.unlearning}
    assert all(0.0 <= m["otr"] <= 1.0 and 0.0 <= m["mia_acc"] <= 1.0 for m in models.values())
    assert models["original"]["acc_retain"] > 0.5  # it trained (digits, chance 0.1)
    assert results["control"]["f1"] >= 0.8  # the planted effect is large
    assert len(results["claims"]) == 10  # with the ranking claim (9 models)
    figures = {p.name for p in (run_path / "figures").iterdir()}
    assert {"f1_vs_subset_size.png", "otr.png", "mia.png"} <= figures
    assert "## Unlearning" in (run_path / "report.md").read_text()
    assert all(0.0 <= r["auc_mean_h"] <= 1.0 for r in results["f1_retrain"])  # the reference-free diagnostic
    assert "auc_mean_h" in (run_path / "report.md").read_text()

    # --resume: the original and retrained models come from the checkpoint (no training rows are appended)
    res = run_cli(cli.main, [*ARGS, "--out-dir", str(run_path.parent.parent), "--resume"])
    assert res.code == 0, res.err
    assert [r["phase"] for r in _rows(run_path)].count("train original") == cfg.epochs
    again = json.loads((run_path / "results.json").read_text())
    assert again["models"]["original"] == models["original"]


def test_same_seed_twice_gives_identical_results(
    first: tuple[Path, dict[str, Any], list[dict[str, Any]]], tmp_path: Path
) -> None:
    """Everything but wall time is a function of the seed: results.json (every metric, the claims) and every
    metrics.jsonl row are identical in a second, independent run (same process, fresh run directory)."""
    _, results, rows = first
    _, results2, rows2 = _run(tmp_path)
    assert _without_wall_time(results2) == _without_wall_time(results)
    assert rows2 == rows
    # the comparison is not vacuous: results carry the measured numbers the claims are made of
    assert results["models"]["retrain"]["acc_test"] > 0.3 and len(results["f1_retrain"]) == 2


def test_saved_models_load_back_bit_for_bit(tmp_path: Path) -> None:
    """Every model the run evaluates (original, retrain, each unlearned one) is saved and loads back with outputs
    (logits and penultimate features) identical to the in-memory model's."""
    run, _ = smoke_run(SPEC, tmp_path, unlearning=("finetune", "mia-fool"))
    assert set(run.saved_models) == {"original", "retrain", "finetune", "mia-fool"}
    x = torch.linspace(-2, 2, 2 * 64).reshape(2, 1, 8, 8)  # digits: 8×8 grey images

    def probe(model: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
        return model(x), model.features(x)  # pyright: ignore[reportCallIssue]

    assert_models_roundtrip(run, dict.fromkeys(run.saved_models, probe))


def test_dry_run_of_the_quick_preset() -> None:
    """``--dry-run`` builds the quick preset's MLP (p = 512 on 28×28 MNIST-5k) and steps it once."""
    out = dry_run(SPEC, PRESETS["quick"], "cpu")
    # MLP 784 → 512 → 512 → 10: 784·512 + 512 + 512·512 + 512 + 512·10 + 10
    assert out["parameters"] == 784 * 512 + 512 + 512 * 512 + 512 + 5120 + 10
    assert out["feature_dim"] == 512 and out["train_loss"] > 0


@pytest.mark.slow
def test_dry_run_of_the_full_preset() -> None:
    """The full preset's VGG9 (width 16, p = 128) on Fashion-MNIST builds and steps (needs the opt-in data set)."""
    from iclr26_shared.errors import DataError

    try:
        out = dry_run(SPEC, PRESETS["full"], "cpu")
    except DataError as e:
        pytest.skip(f"Fashion-MNIST is not installed: {e}")
    assert out["feature_dim"] == 128 and out["parameters"] > 100_000
