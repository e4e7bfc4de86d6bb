"""`iclr26 reproduce`: seeds, verdicts, the process pool and Ray backends, failures, resume."""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from iclr26_shared import umbrella
from iclr26_shared.reproduce import reproduce
from iclr26_shared.spec import Resources
from iclr26_shared.testing import TOY_SPEC, run_cli

SMOKE_TOY = dataclasses.replace(TOY_SPEC, presets={**TOY_SPEC.presets, "quick": TOY_SPEC.presets["smoke"]})
# a failing method that pickles by reference (its run is the toy's, crashing at step 5)
BROKEN = dataclasses.replace(
    SMOKE_TOY, name="broken", presets={k: dataclasses.replace(v, crash_at=5) for k, v in SMOKE_TOY.presets.items()}
)
TWO = dataclasses.replace(SMOKE_TOY, name="toy-two")


def _norm(text: str) -> str:
    """The report with runs of spaces collapsed (markdown_table pads its columns)."""
    return re.sub(r" +", " ", text)


def _claim_rows(text: str) -> list[str]:
    rows = _norm(text).splitlines()
    return [ln.rstrip() for ln in rows if ln.startswith(("| toy-ridge | minibatch", "| toy-two | minibatch"))]


def test_single_seed_report_keeps_going_and_links_runs(tmp_path: Path) -> None:
    report, outcomes = reproduce({"broken": BROKEN, "toy-ridge": SMOKE_TOY}, out_dir=tmp_path, device="cpu")
    assert [o.ok for o in outcomes] == [False, True]
    text = _norm(report.read_text())
    assert report.parent.name.startswith("reproduce-") and report.name == "REPORT.md"
    assert "**Single seed**" in text and "verdict (single seed)" in text
    (row,) = _claim_rows(text)
    assert "| holds |" in row and "(toy: optimum)" in row and "threshold 1.05" in row
    assert "| broken | testing | 0 | **failed**: RuntimeError: toy crash at step 5" in text
    assert "claims: 1 hold, 0 fail, 0 inconclusive" in text
    link = re.search(r"\[report\]\(([^)]+)\)", text)
    assert link is not None and (report.parent / link.group(1)).is_file()
    fig = re.search(r"\[loss\]\(([^)]+)\)", text)
    assert fig is not None and (report.parent / fig.group(1)).is_file()
    data = json.loads((report.parent / "report.json").read_text())
    assert data["claims"][0]["verdict"] == "holds" and data["claims"][0]["single_seed"]
    assert data["runs"][0]["error"] and data["seeds"] == [0]


def test_seeds_give_intervals_and_the_pool_matches_serial(tmp_path: Path) -> None:
    specs = {"toy-ridge": SMOKE_TOY, "toy-two": TWO}
    serial, outs = reproduce(specs, out_dir=tmp_path / "a", device="cpu", seeds=2, seed=3)
    assert [(o.method, o.seed) for o in outs] == [("toy-ridge", 3), ("toy-ridge", 4), ("toy-two", 3), ("toy-two", 4)]
    pool, outs2 = reproduce(specs, out_dir=tmp_path / "b", device="cpu", seeds=2, seed=3, jobs=2)
    # the pool runs each job on 1 thread, serial on all cores: LAPACK's float64 solve may differ in the last ulp
    pooled = [[dataclasses.replace(c, ours=pytest.approx(c.ours, rel=1e-12)) for c in o.claims] for o in outs2]
    assert [o.claims for o in outs] == pooled
    rows_serial = _claim_rows(serial.read_text())
    assert rows_serial == _claim_rows(pool.read_text()) and len(rows_serial) == 2
    assert "gain [95% CI]" in serial.read_text() and rows_serial[0].endswith("| holds | 2 |")


def test_timing_claims_run_alone_and_gpu_methods_are_skipped_without_gpu(tmp_path: Path, monkeypatch) -> None:
    import iclr26_shared.reproduce as rep

    monkeypatch.setattr(rep, "_local_gpu", lambda: False)
    timed = dataclasses.replace(SMOKE_TOY, name="timed", resources=Resources(exclusive=True))
    gpu = dataclasses.replace(SMOKE_TOY, name="gpu-only", gpu_presets=("quick",))
    report, outs = reproduce(
        {"toy-ridge": SMOKE_TOY, "timed": timed, "gpu-only": gpu}, out_dir=tmp_path, device="cpu", jobs=2
    )
    by = {o.method: o for o in outs}
    assert by["timed"].alone and not by["toy-ridge"].alone
    assert by["gpu-only"].skipped == "needs a GPU; none on this machine" and not by["gpu-only"].ok
    assert "skipped: needs a GPU" in report.read_text()


def test_resume_skips_finished_runs_and_finishes_the_plan(tmp_path: Path) -> None:
    report, outs = reproduce({"toy-ridge": SMOKE_TOY}, out_dir=tmp_path, device="cpu", seeds=2)
    out = report.parent
    runs_before = sorted(p.name for p in (out / "toy-ridge").iterdir())
    # forget seed 1's run: resume must redo it and read seed 0's back
    data = json.loads((out / "report.json").read_text())
    import shutil

    shutil.rmtree(str(next(o.run_dir for o in outs if o.seed == 1)))
    report2, outs2 = reproduce({"toy-ridge": SMOKE_TOY}, resume=out)
    assert report2 == report and [o.seed for o in outs2] == [0, 1] and all(o.ok for o in outs2)
    runs_after = sorted(p.name for p in (out / "toy-ridge").iterdir())
    assert runs_before[0] in runs_after and len(runs_after) == 2
    assert json.loads((out / "report.json").read_text())["seeds"] == data["seeds"]


def test_ray_backend_runs_methods_times_seeds_like_the_pool(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    specs = {"toy-ridge": SMOKE_TOY, "toy-two": TWO, "broken": BROKEN}
    ray_report, ray_outs = reproduce(specs, out_dir=tmp_path / "ray", device="cpu", seeds=2, backend="ray")
    assert len(ray_outs) == 6 and [o.ok for o in ray_outs if o.method == "broken"] == [False, False]
    assert all(o.ok for o in ray_outs if o.method != "broken")
    pool_report, _ = reproduce(specs, out_dir=tmp_path / "pool", device="cpu", seeds=2, jobs=2)
    assert _claim_rows(ray_report.read_text()) == _claim_rows(pool_report.read_text())
    assert "backend `ray`" in ray_report.read_text()


def test_run_with_seeds_writes_an_aggregated_report(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(umbrella, "discover_methods", lambda: ({"toy-ridge": TOY_SPEC}, {}))
    res = run_cli(
        umbrella.main, ["run", "toy-ridge", "--preset", "smoke", "--seeds", "2", "--quiet", "--out-dir", str(tmp_path)]
    )
    assert res.code == 0, res.err
    assert "[holds] minibatch SGD" in res.out and "over 2 seeds" in res.out
    (report,) = tmp_path.glob("toy-ridge-seeds-*/REPORT.md")
    assert "| toy-ridge | minibatch SGD" in _norm(report.read_text())


def test_run_with_seeds_stops_at_a_failed_seed_with_a_partial_report(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(umbrella, "discover_methods", lambda: ({"toy-ridge": TOY_SPEC}, {}))
    argv = ["run", "toy-ridge", "--preset", "smoke", "--seeds", "2", "--crash-at", "3", "--quiet"]
    res = run_cli(umbrella.main, [*argv, "--out-dir", str(tmp_path)])
    assert res.code == 1
    assert "toy crash at step 3" in res.err and "seed 0 failed; partial report" in res.err
    (report,) = tmp_path.glob("toy-ridge-seeds-*/REPORT.md")
    assert "**failed**: RuntimeError: toy crash at step 3" in report.read_text()


def test_resume_keeps_the_stored_backend_unless_one_is_given(tmp_path: Path, monkeypatch) -> None:
    import shutil

    from iclr26_shared import reproduce as reproduce_mod

    report, outs = reproduce({"toy-ridge": SMOKE_TOY}, out_dir=tmp_path, device="cpu")
    data = json.loads((report.parent / "report.json").read_text())
    (report.parent / "report.json").write_text(json.dumps({**data, "backend": "ray"}))
    shutil.rmtree(str(outs[0].run_dir))  # something left to run, so a scheduler is needed

    class Chosen(Exception):
        pass

    def fake_ray(*args, **kwargs):
        raise Chosen

    monkeypatch.setattr(reproduce_mod, "RayScheduler", fake_ray)
    with pytest.raises(Chosen):
        reproduce({"toy-ridge": SMOKE_TOY}, resume=report.parent)
    _, outs = reproduce({"toy-ridge": SMOKE_TOY}, resume=report.parent, backend="process")
    assert [o.ok for o in outs] == [True]


def test_resume_reads_finished_runs_back_in_the_driver_with_their_stored_time(tmp_path: Path, monkeypatch) -> None:
    from iclr26_shared import reproduce as reproduce_mod

    report, outs = reproduce({"toy-ridge": SMOKE_TOY}, out_dir=tmp_path, device="cpu", seeds=2)
    data = json.loads((report.parent / "report.json").read_text())
    (report.parent / "report.json").write_text(json.dumps({**data, "backend": "ray"}))

    def no_scheduler(*args, **kwargs):
        raise AssertionError("nothing left to run: no scheduler may start")

    monkeypatch.setattr(reproduce_mod, "RayScheduler", no_scheduler)
    monkeypatch.setattr(reproduce_mod, "run_one", no_scheduler)
    _, outs2 = reproduce({"toy-ridge": SMOKE_TOY}, resume=report.parent)
    assert [(o.seed, o.ok, o.run_dir) for o in outs2] == [(o.seed, o.ok, o.run_dir) for o in outs]
    assert [o.seconds for o in outs2] == [round(o.seconds, 2) for o in outs]
    assert [[c.verdict for c in o.claims] for o in outs2] == [[c.verdict for c in o.claims] for o in outs]


def test_report_embeds_the_forest_plot_and_the_wall_time_table(tmp_path: Path) -> None:
    from iclr26_shared.reproduce import ReproducePlan, RunOutcome, write_reproduce_report
    from iclr26_shared.spec import Claim

    def outcome(method: str, seed: int, ours: float, seconds: float) -> RunOutcome:
        claims = [
            Claim("beats", "acc", ours, baseline=0.5, margin=0.02),
            Claim("bound", "err", 0.1, threshold=0.2, better="lower"),
        ]
        return RunOutcome(method, "d", "p", seed, True, seconds, claims)

    outs = [
        outcome("a", 0, 0.9, 10.0),
        outcome("a", 1, 0.8, 12.5),
        outcome("b", 0, 0.4, 3.0),
        outcome("b", 1, 0.45, 4.0),
    ]
    plan = ReproducePlan(("a", "b"), (0, 1), "quick", "process")
    text = write_reproduce_report(tmp_path, outs, plan, seconds=30.0).read_text()
    assert "![claims: gain and interval against the margin, by verdict](figures/claims.png)" in text
    png = (tmp_path / "figures" / "claims.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    wall = text[text.index("## Wall time per method") :]  # (padded cells: compared stripped)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:5]] for line in wall.splitlines()[4:7]}
    assert (
        rows["a"] == ["2", "22.5", "11.2"]
        and rows["b"] == ["2", "7.0", "3.5"]
        and rows["**total**"][:2] == ["4", "29.5"]
    )
    assert "took 30 s end to end" in wall


def test_cli_default_jobs_is_one_process_per_cpu_with_the_threads_split(tmp_path: Path, monkeypatch) -> None:
    from iclr26_shared import reproduce as rep

    seen: dict[str, object] = {}

    def fake_reproduce(specs, **kw):
        seen.update(kw)
        (tmp_path / "REPORT.md").write_text("")
        return tmp_path / "REPORT.md", []

    monkeypatch.setattr(umbrella, "discover_methods", lambda: ({"toy-ridge": SMOKE_TOY}, {}))
    monkeypatch.setattr(rep, "reproduce", fake_reproduce)
    assert run_cli(umbrella.main, ["reproduce", "--out-dir", str(tmp_path)]).code == 0
    assert seen["jobs"] is None  # resolved inside reproduce() to the CPUs (at most one per run)
    assert run_cli(umbrella.main, ["reproduce", "--jobs", "1", "--out-dir", str(tmp_path)]).code == 0
    assert seen["jobs"] == 1
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    import os
    import signal

    before = signal.getsignal(signal.SIGTERM)
    try:
        rep._pool_worker_init(3)
        assert [os.environ[v] for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")] == ["3"] * 3
    finally:
        signal.signal(signal.SIGTERM, before)  # the worker's SIGTERM handler must not stay in the test process
    assert 1 <= rep.available_cpus() <= (os.cpu_count() or 1)


def test_auto_jobs_runs_and_matches_serial(tmp_path: Path) -> None:
    specs = {"toy-ridge": SMOKE_TOY, "toy-two": TWO}
    serial, _ = reproduce(specs, out_dir=tmp_path / "a", device="cpu", jobs=1)
    auto, outs = reproduce(specs, out_dir=tmp_path / "b", device="cpu", jobs=None)
    assert all(o.ok for o in outs)
    assert _claim_rows(serial.read_text()) == _claim_rows(auto.read_text())


_SLOW_POOL = """
import dataclasses, sys
from iclr26_shared.cli import main_guard
from iclr26_shared.reproduce import reproduce
from iclr26_shared.testing import TOY_SPEC as S
slow = dataclasses.replace(S.presets["smoke"], steps=120, sleep_s=0.05, checkpoint_every=10)
A = dataclasses.replace(S, presets={**S.presets, "quick": slow})
specs = {"toy-ridge": A, "toy-two": dataclasses.replace(A, name="toy-two")}
sys.exit(main_guard(lambda: reproduce(specs, out_dir=sys.argv[1], device="cpu", jobs=2) and 0))
"""


def test_sigterm_stops_the_process_pool_and_the_reproduce_resumes(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    import psutil

    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_POOL, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.time() + 120
    while time.time() < deadline and len({p.parts[-4] for p in tmp_path.glob("*/*/*/checkpoints/*.pt")}) < 2:
        time.sleep(0.2)
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert len(workers) >= 2, "both runs should be running in pool workers"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)  # to the reproduce only, as `timeout` or a scheduler does
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1].startswith("terminated (SIGTERM)"), err
    assert time.monotonic() - t0 < 30, "the workers were not stopped: the pool waited for their runs to end"
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"pool workers left running: {alive}"
    (out,) = tmp_path.glob("reproduce-*")
    slow = dataclasses.replace(TOY_SPEC.presets["smoke"], steps=120, sleep_s=0.05, checkpoint_every=10)
    a = dataclasses.replace(TOY_SPEC, presets={**TOY_SPEC.presets, "quick": slow})
    _, outs = reproduce({"toy-ridge": a, "toy-two": dataclasses.replace(a, name="toy-two")}, resume=out)
    assert all(o.ok for o in outs) and len(outs) == 2
    assert [len(list((out / m).iterdir())) for m in ("toy-ridge", "toy-two")] == [1, 1]  # resumed, not restarted
