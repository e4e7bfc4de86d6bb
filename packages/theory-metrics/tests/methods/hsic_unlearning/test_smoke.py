"""The smoke preset of ``hsic-unlearning`` through the CLI writes a complete run directory, and ``--resume``
reuses the checkpointed original and retrained models."""

from __future__ import annotations

import json
from pathlib import Path

from iclr26_shared.testing import assert_valid_run_dir, run_cli
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS


def test_smoke_cli_run_and_resume(tmp_path: Path) -> None:
    args = ["hsic-unlearning", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet"]
    res = run_cli(cli.main, args)
    assert res.code == 0, res.err
    (run_path,) = (tmp_path / "hsic-unlearning").iterdir()
    results = assert_valid_run_dir(run_path)
    cfg = PRESETS["smoke"]
    rows = [json.loads(line) for line in (run_path / "metrics.jsonl").read_text().splitlines()]
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
    assert len(results["claims"]) == 8
    figures = {p.name for p in (run_path / "figures").iterdir()}
    assert {"f1_vs_subset_size.png", "otr.png", "mia.png"} <= figures
    assert "## Unlearning" in (run_path / "report.md").read_text()

    # --resume: the original and retrained models come from the checkpoint (no training rows are appended)
    res = run_cli(cli.main, [*args, "--resume"])
    assert res.code == 0, res.err
    rows2 = [json.loads(line) for line in (run_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["phase"] for r in rows2].count("train original") == cfg.epochs
    again = json.loads((run_path / "results.json").read_text())
    assert again["models"]["original"] == models["original"]
