"""torchrun/DDP through iclr26_shared.distributed: same loss curve as one process, one run directory, resume."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iclr26_shared.distributed import DistContext, get_context
from iclr26_shared.errors import UsageError
from iclr26_shared.testing import TOY_DDP_SPEC, run_single_and_torchrun, smoke_run


def _torchrun(out: Path, *extra: str, nproc: int = 2) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}"]
    cmd += ["-m", "iclr26_shared.testing", "toy-ddp", "--preset", "smoke", "--device", "cpu", "--quiet"]
    cmd += ["--out-dir", str(out), *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env, check=False)


def _losses(run_dir: Path) -> list[float]:
    return [json.loads(line)["loss"] for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_single_process_context_is_the_identity() -> None:
    ctx = get_context("cpu")
    assert ctx == DistContext() and ctx.is_main and not ctx.distributed
    items = list(range(6))
    assert ctx.shard(items) is items and ctx.mean({"a": 1.5}) == {"a": 1.5} and ctx.sampler(items) is None
    two = DistContext(rank=1, world_size=2)
    assert two.shard(list(range(6))) == [1, 3, 5]
    with pytest.raises(UsageError, match="cannot be split evenly over 2 processes"):
        two.shard(list(range(5)), what="batch_size")


@pytest.mark.slow
def test_torchrun_resume_across_ranks(tmp_path: Path) -> None:
    single, _ = smoke_run(TOY_DDP_SPEC, tmp_path / "one")
    # a 2-process run killed at step 30 resumes from its step-20 checkpoint across ranks
    crashed = _torchrun(tmp_path / "resume", "--crash-at", "30")
    assert crashed.returncode != 0
    (run_dir,) = list((tmp_path / "resume" / "toy-ddp").iterdir())
    assert [p.name for p in sorted((run_dir / "checkpoints").iterdir())] == ["step-000000020.pt"]
    # same config as the crashed run (crash_at is part of the config hash), continued past the crash step
    resumed = _torchrun(tmp_path / "resume", "--crash-at", "30", "--resume")
    assert resumed.returncode != 0 and len(_losses(run_dir)) == 30  # crashed again at 30, metrics not doubled
    assert _losses(run_dir) == pytest.approx(_losses(single.path)[:30], rel=1e-5, abs=1e-6)


def test_bad_launch_world_larger_than_the_batch(tmp_path: Path) -> None:
    res = _torchrun(tmp_path, "--batch-size", "3", nproc=2)
    assert res.returncode != 0 and "cannot be split evenly over 2 processes" in res.stderr
    assert "Traceback" not in "".join(ln for ln in res.stderr.splitlines(True) if "error:" in ln)


def test_torchrun_two_processes_match_one(tmp_path: Path) -> None:
    args = ["toy-ddp", "--preset", "smoke", "--device", "cpu", "--quiet"]
    one, two = run_single_and_torchrun("iclr26_shared.testing", args, tmp_path)
    # exactly one run directory each: only rank 0 writes
    (a,), (b,) = list((one / "toy-ddp").iterdir()), list((two / "toy-ddp").iterdir())
    assert json.loads((b / "results.json").read_text())["world_size"] == 2
    assert _losses(b) == pytest.approx(_losses(a), rel=1e-5, abs=1e-6)
    with pytest.raises(AssertionError, match="exited"):  # a failing launch shows its stderr
        run_single_and_torchrun("iclr26_shared.testing", [*args, "--batch-size", "3"], tmp_path / "bad")
