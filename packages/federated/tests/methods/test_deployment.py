"""Flower's deployment engine: a real SuperLink and two SuperNodes (subprocesses on free ports) run the
same app with ``flwr run``; with one SuperNode killed mid-round the run still finishes and says how many
clients answered. Every started process is stopped by PID."""

import json
import time
from pathlib import Path

import pytest

from iclr26_federated.methods.fedopenmatch.utils import (
    FlowerProcess,
    flwr_run,
    log_tail,
    start_superlink,
    start_supernode,
)


def _one_run(tmp_path: Path, name: str, kill: FlowerProcess | None = None) -> tuple[dict, str]:
    home = tmp_path / "flwr-home"
    out = tmp_path / name
    log = tmp_path / f"{name}.log"
    killed = [False]

    def poll() -> None:  # kill the SuperNode once the warm-up is done and round 1 has been sent
        if kill is None or killed[0]:
            return
        metrics = list(out.glob("fedopenmatch/*/metrics.jsonl"))
        if metrics and metrics[0].read_text().strip():
            time.sleep(1.0)
            kill.stop(timeout=5)
            killed[0] = True

    code = flwr_run(
        home,
        PORT[0],
        {"out-dir": str(out), "num-rounds": 1, "variants": "fedopenmatch"},
        log,
        timeout=900,
        poll=poll,
    )
    assert code == 0, log_tail(log)
    assert kill is None or killed[0]
    (run_dir,) = (out / "fedopenmatch").iterdir()
    assert (run_dir / "results.json").is_file(), log_tail(log)
    return json.loads((run_dir / "results.json").read_text()), log.read_text()


PORT = [0]


@pytest.mark.slow
def test_deployment_superlink_and_two_supernodes(tmp_path: Path) -> None:
    home = tmp_path / "flwr-home"
    procs: list[FlowerProcess] = []
    try:
        link, PORT[0] = start_superlink(home, tmp_path / "superlink.log", simulation=False)
        procs.append(link)
        nodes = [start_supernode(home, PORT[0], pid, 2, tmp_path / f"supernode-{pid}.log") for pid in range(2)]
        procs += nodes
        results, out = _one_run(tmp_path, "full")
        assert results["engine"] == "flwr-run" and results["jobs"][0]["participants"] == [2]
        assert results["failures"] == [] and "clients answered per round: [2] of 2" in out
        # one SuperNode dies mid-round: the SuperLink answers its message with an error after the heartbeat
        # patience; the round aggregates the other client and the report says so
        results, out = _one_run(tmp_path, "one-killed", kill=nodes[1])
        assert results["jobs"][0]["participants"] == [1]
        assert len(results["failures"]) == 1 and "clients answered per round: [1] of 2" in out
    finally:
        for p in reversed(procs):
            p.stop()
    assert not any(p.alive() for p in procs)
