"""The sequence-models CLI keeps the domain contract (help, exit codes, entry point, METHODS) and runs smoke."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from iclr26_sequence_models import cli
from iclr26_shared.testing import assert_valid_run_dir, check_domain_cli, run_cli


def test_domain_cli_contract() -> None:
    check_domain_cli(cli.main, cli.METHODS, "sequence-models")


def test_selective_rope_smoke_cli_writes_a_run_dir(tmp_path: Path) -> None:
    res = run_cli(
        cli.main,
        ["selective-rope", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet"],
    )
    assert res.code == 0, res.err
    (run_path,) = (tmp_path / "selective-rope").iterdir()
    results = assert_valid_run_dir(run_path)
    assert set(results["tasks"]) == {"state", "copy", "mqar", "lm"}
    for task in results["tasks"].values():
        assert set(task["runs"]) == {"nope", "rope", "selective"}
        for r in task["runs"].values():
            assert r["curve"] and r["params"] > 0
    assert len(results["claims"]) == 5
    # LM: every position tuned over the lr factors; copying: Selective RoPE over bias x gate
    for pos, r in results["tasks"]["lm"]["runs"].items():
        assert [c["lr"] for c in r["sweep"]] == [2e-3 * f for f in (1.0, 2.0)], pos  # the lr_factors default
        assert r["val_metric"] == min(c["val_metric"] for c in r["sweep"])  # bits/byte: lower wins
    copy = results["tasks"]["copy"]["runs"]
    assert "sweep" not in copy["rope"] and len(copy["selective"]["sweep"]) == 4
    assert copy["selective"]["val_metric"] == max(c["val_metric"] for c in copy["selective"]["sweep"])
    assert all((run_path / "figures" / f"{t}_curve.png").is_file() for t in results["tasks"])
    rows = [json.loads(line) for line in (run_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == sorted(r["step"] for r in rows)
    # resuming the finished run reads its results back instead of training again
    again = run_cli(
        cli.main,
        ["selective-rope", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet", "--resume"],
    )
    assert again.code == 0 and len(list((tmp_path / "selective-rope").iterdir())) == 1


def test_bad_value_exits_2_with_one_line(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["selective-rope", "--preset", "smoke", "--state.seq-len", "0", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "state.seq_len" in res.err


def test_help_and_import_load_no_torch() -> None:
    """``import iclr26_sequence_models`` and ``selective-rope --help`` stay light (``iclr26 list`` imports them)."""
    code = (
        "import sys, iclr26_sequence_models, iclr26_sequence_models.cli as c\n"
        "from iclr26_sequence_models.methods.selective_rope import SPEC\n"
        "assert SPEC.name == 'selective-rope'\n"
        "try:\n    c.main(['selective-rope', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout
