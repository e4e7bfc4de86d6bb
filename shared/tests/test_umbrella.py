"""The umbrella `iclr26`: discovery, list, run, flags of reproduce (see test_reproduce.py), bench."""

import json
from pathlib import Path

from iclr26_shared import umbrella
from iclr26_shared.testing import TOY_SPEC, run_cli


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
    for bad, word in [
        (["--jobs", "0"], "--jobs"),
        (["--seeds", "0"], "--seeds"),
        (["--backend", "slurm"], "invalid choice"),
        (["--backend", "ray", "--address", "127.0.0.1:1"], "no Ray head answers"),
        (["--backend", "ray", "--address", "nohost"], "HOST:PORT"),
        (["--address", "127.0.0.1:1"], "needs --backend ray"),
        (["--resume", str(tmp_path / "nothing")], "not found"),
    ]:
        res = run_cli(umbrella.main, ["reproduce", "--out-dir", str(tmp_path), *bad])
        assert res.code == 2 and word in res.err, (bad, res.err)
        assert len(res.err.strip().splitlines()) <= 2, res.err  # (the load warning +) one error line
    res = run_cli(umbrella.main, ["run", "toy-ridge", "--seeds", "0"])
    assert res.code == 2 and "--seeds" in res.err


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
