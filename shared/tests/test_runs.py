"""Run directories: files, metrics, atomic checkpoints, keep-last-K, resume, corrupt inputs."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from iclr26_shared.errors import CheckpointError
from iclr26_shared.runner import CommonFlags, execute
from iclr26_shared.runs import RunDir, load_checkpoint_file
from iclr26_shared.testing import TOY_SPEC, ToyConfig, assert_valid_run_dir


def _run(tmp_path: Path, cfg: object = None, **kw) -> RunDir:
    return RunDir.create(tmp_path, "m", cfg or ToyConfig(), seed=kw.pop("seed", 0), **kw)


def test_create_writes_config_and_env(tmp_path: Path) -> None:
    run = _run(tmp_path, preset="smoke")
    assert run.path.parent == tmp_path / "m"
    assert run.path.name.endswith(RunDir.run_hash(ToyConfig(), 0))
    cfg = json.loads((run.path / "config.json").read_text())
    assert cfg["config"]["steps"] == ToyConfig().steps and cfg["preset"] == "smoke" and cfg["seed"] == 0
    env = json.loads((run.path / "env.json").read_text())
    assert env["device"] == "cpu" and "torch" in env["packages"] and "iclr26-shared" in env["packages"]


def test_new_runs_never_share_a_directory(tmp_path: Path) -> None:
    a, b = _run(tmp_path), _run(tmp_path)
    assert a.path != b.path


def test_metrics_append_and_tolerate_a_cut_last_line(tmp_path: Path) -> None:
    run = _run(tmp_path)
    run.log(1, loss=2.0)
    run.log(2, loss=float("nan"), acc=torch.tensor(0.5))
    with open(run.metrics_path, "a") as fh:
        fh.write('{"step": 3, "lo')  # a kill in the middle of a write
    rows = run.read_metrics()
    assert rows == [{"step": 1, "loss": 2.0}, {"step": 2, "loss": None, "acc": 0.5}]
    run.metrics_path.write_text('{"step": 1}\nnot json\n{"step": 3}\n')
    with pytest.raises(CheckpointError, match="line 2"):
        run.read_metrics()


def test_checkpoints_are_atomic_and_keep_last_k(tmp_path: Path) -> None:
    run = _run(tmp_path, keep_last=2)
    for step in (10, 20, 30):
        run.save_checkpoint(step, {"w": torch.full((3,), float(step)), "meta": {"lr": 0.1, "tags": ["a"]}})
    assert [s for s, _ in run.checkpoints()] == [20, 30]
    assert not [p for p in run.checkpoint_dir.iterdir() if p.name.endswith(".tmp")]
    loaded = run.load_checkpoint()
    assert loaded is not None
    step, state = loaded
    assert step == 30 and torch.equal(state["w"], torch.full((3,), 30.0)) and state["meta"]["tags"] == ["a"]


def test_load_checkpoint_trims_metrics_logged_after_it(tmp_path: Path) -> None:
    run = _run(tmp_path)
    for s in range(1, 6):
        run.log(s, x=s)
        if s == 3:
            run.save_checkpoint(3, {})
    run.load_checkpoint()  # the same process: its own rows are never trimmed
    assert [r["step"] for r in run.read_metrics()] == [1, 2, 3, 4, 5]
    resumed = _run(tmp_path, resume=True)  # the killed run reopened: rows after the checkpoint go
    resumed.load_checkpoint()
    assert [r["step"] for r in resumed.read_metrics()] == [1, 2, 3]


def test_resuming_without_a_checkpoint_starts_the_metrics_over(tmp_path: Path) -> None:
    run = _run(tmp_path)
    for s in range(1, 4):
        run.log(s, x=s)  # killed before its first checkpoint
    resumed = _run(tmp_path, resume=True)
    assert resumed.load_checkpoint() is None and resumed.read_metrics() == []


def test_a_later_stage_never_trims_an_earlier_stages_fresh_rows(tmp_path: Path) -> None:
    """Issue 52 §2 (s2-guidance): a fresh run's second stage calls load_checkpoint() (no checkpoint yet);
    the rows the first stage logged in this process stay."""
    run = _run(tmp_path)
    for s in range(5):
        run.log(s, stage="gmm", w2=float(s))
    assert run.load_checkpoint(stage="images") is None and run.load_checkpoint() is None
    assert [(r["stage"], r["step"]) for r in run.read_metrics()] == [("gmm", s) for s in range(5)]


def test_trimming_on_resume_is_per_stage(tmp_path: Path) -> None:
    """Sub-runs that reuse step numbers (brain-semantoks' variants, causal-delta's) log with their stage;
    resuming stage b trims only b's rows after its checkpoint, never a finished stage a's."""
    run = _run(tmp_path)
    for s in range(4):
        run.log(s, stage="a", x=s)
    for s in range(6):
        run.log(s, stage="b", x=s)
        if s == 2:
            run.save_checkpoint(2, {})
    resumed = _run(tmp_path, resume=True)
    assert resumed.load_checkpoint(stage="b") is not None
    rows = [(r["stage"], r["step"]) for r in resumed.read_metrics()]
    assert rows == [("a", s) for s in range(4)] + [("b", s) for s in range(3)]
    resumed.log(3, stage="b", x=3)  # the resumed stage appends each step exactly once
    assert [(r["stage"], r["step"]) for r in resumed.read_metrics()][-2:] == [("b", 2), ("b", 3)]


def test_stale_temporary_files_of_a_killed_write_are_removed_on_resume(tmp_path: Path) -> None:
    run = _run(tmp_path)
    kept = run.save_checkpoint(1, {})
    stray = run.checkpoint_dir / ".step-000000002.pt.k3j2.tmp"  # a SIGKILL between write and rename
    stray.write_bytes(b"half")
    (run.path / ".results.json.x1.tmp").write_text("{")
    half_model = run.path / "models" / ".net-abc"
    half_model.mkdir(parents=True)
    (half_model / "model.safetensors").write_bytes(b"")
    (run.path / "notes.tmp").write_text("a user's file")  # not one of ours: kept
    _run(tmp_path, resume=True)
    assert not stray.exists() and not (run.path / ".results.json.x1.tmp").exists() and not half_model.exists()
    assert kept.exists() and (run.path / "notes.tmp").exists()


def _hold_lock(path: Path) -> subprocess.Popen[str]:
    """Another process holding the run directory's flock (as a concurrent --resume does)."""
    code = (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); "
        "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_process_resuming_the_same_run_is_refused_in_one_line(tmp_path: Path) -> None:
    from iclr26_shared.cli import run_methods
    from iclr26_shared.errors import UsageError
    from iclr26_shared.testing import run_cli

    argv = ["toy-ridge", "--preset", "smoke", "--quiet", "--out-dir", str(tmp_path)]
    main = lambda a: run_methods({TOY_SPEC.name: TOY_SPEC}, a, prog="t")  # noqa: E731
    assert run_cli(main, argv).code == 0  # the run's lock is released when the run is written
    (run_path,) = (tmp_path / TOY_SPEC.name).iterdir()
    (run_path / "results.json").unlink()  # unfinished again
    proc = _hold_lock(run_path)
    try:
        res = run_cli(main, [*argv, "--resume"])
        lines = res.err.strip().splitlines()
        assert res.code == 2 and len(lines) == 1 and "in use by another process" in lines[0], res.err
        with pytest.raises(UsageError, match="in use by another process"):
            RunDir.create(tmp_path, TOY_SPEC.name, TOY_SPEC.preset("smoke"), seed=0, resume=True)
    finally:
        proc.kill()
        proc.wait()
    assert run_cli(main, [*argv, "--resume"]).code == 0  # a killed holder leaves no stale lock
    assert (run_path / "results.json").is_file()


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "pickle-object", "not-ours"])
def test_corrupt_checkpoint_gives_clear_error(tmp_path: Path, damage: str) -> None:
    run = _run(tmp_path)
    path = run.save_checkpoint(5, {"w": torch.ones(100)})
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00\x01garbage")
    elif damage == "pickle-object":
        torch.save({"step": 5, "state": {"x": _Evil()}}, path)
    else:
        torch.save({"weights": torch.ones(2)}, path)
    with pytest.raises(CheckpointError, match=str(path.name)):
        run.load_checkpoint()
    with pytest.raises(CheckpointError):
        load_checkpoint_file(path)


def test_resume_reopens_matching_run_only(tmp_path: Path) -> None:
    first = _run(tmp_path)
    again = _run(tmp_path, resume=True)
    assert again.path == first.path and again.resumed
    other_cfg = _run(tmp_path, ToyConfig(lr=0.01), resume=True)
    other_seed = _run(tmp_path, seed=1, resume=True)
    assert other_cfg.path != first.path and other_seed.path != first.path and not other_cfg.resumed


def test_resume_with_corrupt_config_json_is_a_clear_error(tmp_path: Path) -> None:
    first = _run(tmp_path)
    (first.path / "config.json").write_text('{"config": {"n": 2')
    with pytest.raises(CheckpointError, match="config.json.*not valid JSON"):
        _run(tmp_path, resume=True)
    (first.path / "config.json").write_text('{"config": {"n": 2}, "seed": 0}')
    with pytest.raises(CheckpointError, match="differs"):
        _run(tmp_path, resume=True)


def test_crashed_run_resumes_bit_for_bit(tmp_path: Path) -> None:
    cfg = ToyConfig(steps=60, checkpoint_every=20)
    flags = CommonFlags(device="cpu", out_dir=tmp_path / "a", quiet=True)
    _, clean, _ = execute(TOY_SPEC, cfg, flags)

    crash_flags = CommonFlags(device="cpu", out_dir=tmp_path / "b", quiet=True)
    with pytest.raises(RuntimeError, match="toy crash at step 47"):
        execute(TOY_SPEC, ToyConfig(steps=60, checkpoint_every=20, crash_at=47), crash_flags)
    # The crash hook is part of the config, so reopen the crashed directory with the clean config.
    crashed = next((tmp_path / "b" / TOY_SPEC.name).iterdir())
    assert [
        s for s, _ in RunDir(crashed, method="m", config=cfg, seed=0, device=torch.device("cpu")).checkpoints()
    ] == [20, 40]
    run = RunDir(crashed, method=TOY_SPEC.name, config=cfg, seed=0, device=torch.device("cpu"), quiet=True)
    resumed = TOY_SPEC.run(cfg, run)
    assert resumed["w"] == clean["w"]  # bit-for-bit: RNG states travel in the checkpoint
    assert [r["step"] for r in run.read_metrics()] == list(range(1, 61))  # each step logged exactly once


def test_killed_process_resumes_and_loses_no_finished_work(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        from iclr26_shared.cli import run_methods
        from iclr26_shared.testing import TOY_SPEC
        sys.exit(run_methods([TOY_SPEC], sys.argv[1:], prog="toy"))
        """
    )
    args = [sys.executable, "-c", script, "toy-ridge", "--preset", "smoke", "--device", "cpu", "--quiet"]
    args += ["--out-dir", str(tmp_path), "--checkpoint-every", "10", "--sleep-s", "0.05"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    ckpt_dir = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list(tmp_path.glob("toy-ridge/*/checkpoints/step-*.pt"))
        if found:
            ckpt_dir = found[0].parent
            break
        time.sleep(0.05)
    assert ckpt_dir is not None, "no checkpoint appeared"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = max(int(p.stem.split("-")[1]) for p in ckpt_dir.glob("step-*.pt"))
    assert not (ckpt_dir.parent / "results.json").exists()

    res = subprocess.run(args + ["--resume"], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    run_dirs = list(tmp_path.glob("toy-ridge/*"))
    assert len(run_dirs) == 1, "resume must reuse the killed run's directory"
    results = assert_valid_run_dir(run_dirs[0])
    steps = [json.loads(line)["step"] for line in (run_dirs[0] / "metrics.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 61)) and done_before >= 10
    assert results["claims"][0]["verdict"] == "holds"


def _fails_with_bad_data(after_metrics: bool):
    from iclr26_shared.errors import DataError

    def run(cfg: ToyConfig, run: RunDir) -> dict:
        if after_metrics:
            run.log(1, loss=1.0)
        assert run.figures_dir.is_dir()  # an empty folder does not count as work
        raise DataError("data.csv: expected 3 columns, got 2")

    return run


@pytest.mark.parametrize("after_metrics", [False, True])
def test_bad_input_before_any_work_leaves_no_run_directory(tmp_path: Path, after_metrics: bool) -> None:
    import dataclasses

    from iclr26_shared.errors import DataError

    spec = dataclasses.replace(TOY_SPEC, run=_fails_with_bad_data(after_metrics))
    with pytest.raises(DataError, match="data.csv"):
        execute(spec, ToyConfig(), CommonFlags(device="cpu", out_dir=tmp_path, quiet=True))
    left = list((tmp_path / TOY_SPEC.name).iterdir())
    # nothing half-written stays behind; a run that had logged work is kept (it can be inspected)
    assert len(left) == (1 if after_metrics else 0)
