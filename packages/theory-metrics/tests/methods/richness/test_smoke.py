"""The smoke preset of ``richness`` through the CLI writes a complete run directory (curve rows per phase,
figures, report, claims); a bad flag exits 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

from iclr26_shared.testing import assert_valid_run_dir, run_cli
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.richness.config import PRESETS


def test_smoke_cli_run(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["richness", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet"])
    assert res.code == 0, res.err
    (run_path,) = (tmp_path / "richness").iterdir()
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


def test_bad_flag_exits_2(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["richness", "--preset", "smoke", "--heads", "5", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "heads" in res.err and len(res.err.strip().splitlines()) == 1
