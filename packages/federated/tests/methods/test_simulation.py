"""End to end on Flower's simulation engine (Ray backend): 2 virtual clients, 1 round, one failing."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from iclr26_federated.methods.fedopenmatch.spec import SPEC
from iclr26_shared.testing import smoke_run


@pytest.mark.slow
def test_ray_simulation_two_clients_one_round(tmp_path) -> None:
    os.environ.setdefault("FLWR_DISABLE_UPDATE_CHECK", "1")
    _, results = smoke_run(
        SPEC,
        tmp_path,
        engine="ray",
        num_rounds=1,
        variants=("fedopenmatch",),
        fail_client=1,
        ray_cpus=2,
    )
    (job,) = results["jobs"]
    assert results["engine"] == "ray" and results["simulation_wall_s"] > 0
    assert job["participants"] == [1]  # client 1 raised inside a Ray actor; the round went on
    assert len(results["failures"]) == 1 and "injected failure" in results["failures"][0]["reason"]
    assert len(job["history"]) == 2  # round 0 and round 1 evaluated


def _flower_processes(home: str) -> list[psutil.Process]:
    """Live processes that belong to the run whose Flower home is ``home``: its path on the command line
    (the SuperLink's --database) or FLWR_HOME in the environment (flwr run, the simulation, Ray's)."""
    out = []
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if any(home in part for part in proc.cmdline()) or proc.environ().get("FLWR_HOME", "").startswith(home):
                out.append(proc)
        except psutil.Error:
            continue
    return out


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_the_cli_during_a_ray_run_leaves_no_flower_process(tmp_path, sig) -> None:
    env = {**os.environ, "FLWR_DISABLE_UPDATE_CHECK": "1", "OMP_NUM_THREADS": "1"}
    args = [sys.executable, "-m", "iclr26_federated", "fedopenmatch", "--preset", "smoke", "--engine", "ray"]
    args += ["--num-rounds", "50", "--device", "cpu", "--quiet", "--out-dir", str(tmp_path)]
    cli = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 400
        logs: list[Path] = []
        while time.monotonic() < deadline and cli.poll() is None:  # until the ServerApp reports a round
            logs = list(tmp_path.glob("fedopenmatch/*/metrics.jsonl"))
            if logs and logs[0].read_text().count("\n") >= 2:
                break
            time.sleep(1)
        assert logs and cli.poll() is None, "the run did not reach its first round"
        home = str(logs[0].parent / "flower")
        assert _flower_processes(home), "no Flower process found while running"
        cli.send_signal(sig)
        cli.wait(60)
        deadline = time.monotonic() + 90
        while (left := _flower_processes(home)) and time.monotonic() < deadline:
            time.sleep(1)
        assert not left, f"left behind after {sig.name}: {[p.cmdline()[:3] for p in left]}"
    finally:
        cli.kill()
        cli.wait()
