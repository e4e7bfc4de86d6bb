"""The smoke preset through the CLI writes a complete run directory with every NC metric per epoch; bad
flags exit 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

from iclr26_shared.testing import assert_valid_run_dir, run_cli
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.ops.neural_collapse import METRIC_KEYS


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
