"""The smoke preset through the CLI writes a complete run directory with every NC metric per epoch; bad
flags exit 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from iclr26_shared.models import list_models
from iclr26_shared.testing import assert_models_roundtrip, assert_valid_run_dir, run_cli, smoke_run
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.neural_collapse.config import PRESETS, expand_grid
from iclr26_theory_metrics.methods.neural_collapse.spec import SPEC
from iclr26_theory_metrics.methods.neural_collapse.train import model_name
from iclr26_theory_metrics.ops.neural_collapse import METRIC_KEYS


def _grid():
    return expand_grid(PRESETS["smoke"])


def test_smoke_cli_run(tmp_path: Path) -> None:
    res = run_cli(
        cli.main, ["neural-collapse", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet"]
    )
    assert res.code == 0, res.err
    (run_path,) = (tmp_path / "neural-collapse").iterdir()
    results = assert_valid_run_dir(run_path)
    assert len(results["runs"]) == 3  # sgd, adamw and SGD without momentum at the matched effective step
    assert {c["metric"] for c in results["claims"]} >= {"α_T/α_0", "two-sided p-value of the slope"}
    assert all(c["verdict"] in ("holds", "fails", "inconclusive") for c in results["claims"])
    rows = [json.loads(line) for line in (run_path / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * (3 + 1)  # epochs 0..3 per run
    assert all(set(METRIC_KEYS) <= set(r) for r in rows)
    figures = {p.name for p in (run_path / "figures").iterdir()}
    assert {"ufm_sgd.png", "ufm_signgd.png", "epoch_nc0.png", "epoch_nc3.png", "final_nc0.png"} <= figures
    saved = list_models(run_path)  # each trained network, named after its grid run
    assert sorted(saved) == [model_name(r["index"], s) for r, s in zip(results["runs"], _grid(), strict=True)]
    report = (run_path / "report.md").read_text()
    assert "## UFM (Theorems 3.1–3.4)" in report and "## All runs" in report
    # resume of a finished run reads its results back
    res = run_cli(
        cli.main,
        ["neural-collapse", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet", "--resume"],
    )
    assert res.code == 0 and len(list((tmp_path / "neural-collapse").iterdir())) == 1


def test_bad_flags_exit_2(tmp_path: Path) -> None:
    res = run_cli(
        cli.main, ["neural-collapse", "--preset", "smoke", "--optimizers", "sgd", "lion", "--out-dir", str(tmp_path)]
    )
    assert res.code == 2 and "optimizers" in res.err and len(res.err.strip().splitlines()) == 1


def test_saved_networks_load_back_and_give_the_same_logits(tmp_path: Path) -> None:
    run, results = smoke_run(SPEC, tmp_path, ufm=False)
    assert len(run.saved_models) == len(results["runs"]) == 3

    def probe(model: torch.nn.Module) -> torch.Tensor:  # a fixed input shaped for the network's first layer
        first = next(m for m in model.modules() if isinstance(m, torch.nn.Conv2d | torch.nn.Linear))
        shape = (2, first.in_channels, 8, 8) if isinstance(first, torch.nn.Conv2d) else (2, first.in_features)
        return model(torch.linspace(-2, 2, int(torch.tensor(shape).prod())).reshape(shape))

    assert_models_roundtrip(run, dict.fromkeys(run.saved_models, probe))


def test_dry_run_of_the_quick_preset() -> None:
    """``--dry-run`` builds the quick preset's VGG9 (the default width, on digits) with every optimizer of its grid,
    and steps the first run once; the parameter count is that of the network the run trains."""
    from iclr26_shared.dryrun import dry_run
    from iclr26_theory_metrics.methods.neural_collapse.model import build_run_model

    cfg = PRESETS["quick"]
    out = dry_run(SPEC, cfg, "cpu")
    net = build_run_model(cfg, (1, 8, 8), 10)
    assert out["parameters"] == sum(p.numel() for p in net.parameters())
    assert out["grid_runs"] == len(expand_grid(cfg)) and out["train_loss"] > 0


@pytest.mark.slow
def test_dry_run_of_the_full_preset() -> None:
    """The full preset (MNIST-5k, width 16, the paper's grid) builds and steps."""
    from iclr26_shared.dryrun import dry_run

    out = dry_run(SPEC, PRESETS["full"], "cpu")
    assert out["feature_dim"] == 8 * 16 and out["grid_runs"] == len(expand_grid(PRESETS["full"]))
