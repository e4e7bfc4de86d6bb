"""The umbrella `iclr26`: discovery, list, run, reproduce (keeps going on failure), bench."""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from iclr26_shared import umbrella
from iclr26_shared.testing import TOY_SPEC, run_cli


def _broken_run(cfg, run):
    raise RuntimeError("boom")


BROKEN = dataclasses.replace(TOY_SPEC, name="broken", run=_broken_run)
SMOKE_TOY = dataclasses.replace(TOY_SPEC, presets={**TOY_SPEC.presets, "quick": TOY_SPEC.presets["smoke"]})


def test_reproduce_keeps_going_and_writes_a_well_formed_report(tmp_path: Path) -> None:
    report, outcomes = umbrella.reproduce(
        {"broken": BROKEN, "toy-ridge": SMOKE_TOY}, preset="quick", out_dir=tmp_path, device="cpu"
    )
    assert [o.ok for o in outcomes] == [False, True]
    text = report.read_text()
    assert report.parent.name.startswith("reproduce-") and report.name == "REPORT.md"
    header = "| method | claim | metric | paper | ours | baseline | holds |"
    assert header in text
    row = next(line for line in text.splitlines() if line.startswith("| toy-ridge | minibatch SGD"))
    assert row.endswith("| yes |") and "(toy: optimum)" in row
    assert "| broken | testing | **failed**: RuntimeError: boom |" in text
    assert "1/1 claims hold" in text and "verdicts mean nothing" not in text
    link = re.search(r"\[report\]\(([^)]+)\)", text).group(1)
    assert (report.parent / link).is_file()  # relative link to the method's report.md resolves
    fig = re.search(r"\[loss\]\(([^)]+)\)", text).group(1)
    assert (report.parent / fig).is_file()
    data = json.loads((report.parent / "report.json").read_text())
    assert data["methods"][1]["claims"][0]["holds"] is True and data["methods"][0]["error"]


def test_reproduce_runs_methods_in_parallel_processes(tmp_path: Path) -> None:
    second = dataclasses.replace(SMOKE_TOY, name="toy-two")
    report, outcomes = umbrella.reproduce(
        {"toy-ridge": SMOKE_TOY, "toy-two": second}, out_dir=tmp_path, device="cpu", jobs=2
    )
    assert [o.method for o in outcomes] == ["toy-ridge", "toy-two"] and all(o.ok for o in outcomes)
    assert "2/2 claims hold" in report.read_text()


def test_reproduce_rejects_unknown_methods_and_presets(tmp_path: Path) -> None:
    from iclr26_shared.errors import UsageError

    with pytest.raises(UsageError, match="unknown method"):
        umbrella.reproduce({"toy-ridge": TOY_SPEC}, only=["nope"], out_dir=tmp_path)
    with pytest.raises(UsageError, match="unknown preset"):
        umbrella.reproduce({"toy-ridge": TOY_SPEC}, preset="paper", out_dir=tmp_path)


def test_cli_list_run_and_errors(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(umbrella, "discover_methods", lambda: ({"toy-ridge": TOY_SPEC}, {"bad": "ImportError: x"}))
    res = run_cli(umbrella.main, ["list"])
    assert res.code == 0 and "toy-ridge" in res.out and "domain 'bad' failed to load" in res.err
    res = run_cli(umbrella.main, ["run", "toy-ridge", "--preset", "smoke", "--quiet", "--out-dir", str(tmp_path)])
    assert res.code == 0 and "run directory:" in res.out
    res = run_cli(umbrella.main, ["run", "toy-ridge", "--help"])
    assert res.code == 0 and "--checkpoint-every" in res.out
    res = run_cli(umbrella.main, ["reproduce", "--only", "nope", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 2  # the load warning + one error line
    res = run_cli(umbrella.main, ["frobnicate"])
    assert res.code == 2 and "invalid choice" in res.err and len(res.err.strip().splitlines()) == 1
    res = run_cli(umbrella.main, ["reproduce", "--jobs", "0", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "--jobs" in res.err


def test_discovery_finds_every_installed_domain() -> None:
    specs, errors = umbrella.discover_methods()
    assert errors == {}
    for spec in specs.values():
        assert spec.domain in {
            "sequence-models", "generative-vision", "graphs", "science", "rl", "federated", "theory-metrics", "recsys",
        }  # fmt: skip


def test_bench_runs_scripts_and_reports_failures(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "packages" / "demo" / "benchmarks").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    ok = root / "packages" / "demo" / "benchmarks" / "ok.py"
    ok.write_text(
        "from iclr26_shared.bench import bench_main, compare\n"
        "bench_main('ok', lambda quick: {'x': compare(lambda: sum(range(100)), lambda: sum(range(1000)), repeats=2)})\n"
    )
    (ok.parent / "bad.py").write_text("raise SystemExit(3)\n")
    failures = umbrella.bench(root, only=None, out_dir=tmp_path / "out", quick=True)
    assert failures == 1
    out = next((tmp_path / "out").glob("bench-*/demo-ok.json"))
    assert json.loads(out.read_text())["results"]["x"]["speedup"] > 0
