"""Flower's deployment engine: a real SuperLink and two SuperNodes (subprocesses on free ports) run the
same app (the packaged app directory, as from a wheel) with ``flwr run`` on a user's own data: the run
config's ``data-file`` holds only the server's labelled and test sets, each SuperNode's ``--node-config
data-file=...`` only its own images. With one SuperNode killed mid-round the run still finishes and says
how many clients answered. Every started process is stopped by PID."""

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iclr26_federated.methods.fedopenmatch import save_data, save_node_data
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

    run_config = {"out-dir": str(out), "num-rounds": 1, "variants": "fedopenmatch"}
    run_config |= {"data-file": str(tmp_path / "server.npz"), "known-classes": 4}
    code = flwr_run(
        home,
        PORT[0],
        run_config,
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


def _user_data(tmp_path: Path) -> tuple[list[Path], list[int]]:
    """sklearn's 8x8 digits (offline): 0-3 known, 4-5 unknown; the server's file has no client images, each
    node's file 60 unlabelled images. Returns the node files and the test images per open-set class."""
    from sklearn.datasets import load_digits

    d: Any = load_digits()
    x, y = (d.images * 15.9).astype(np.uint8), d.target
    rng = np.random.default_rng(0)
    server = np.concatenate([rng.choice(np.flatnonzero(y == k), 10, replace=False) for k in range(4)])
    pool = rng.permutation(np.setdiff1d(np.flatnonzero(y < 6), server))
    test_y = np.minimum(y[pool[120:320]], 4)
    save_data(tmp_path / "server.npz", (x[server], y[server]), None, (x[pool[120:320]], test_y), num_known=4)
    nodes = [save_node_data(tmp_path / f"node-{i}.npz", x[pool[60 * i : 60 * (i + 1)]]) for i in range(2)]
    return nodes, np.bincount(test_y, minlength=5).tolist()


@pytest.mark.slow
def test_deployment_superlink_and_two_supernodes(tmp_path: Path) -> None:
    home = tmp_path / "flwr-home"
    procs: list[FlowerProcess] = []
    try:
        link, PORT[0] = start_superlink(home, tmp_path / "superlink.log", simulation=False)
        procs.append(link)
        files, test_counts = _user_data(tmp_path)
        nodes = [
            start_supernode(home, PORT[0], pid, 2, tmp_path / f"supernode-{pid}.log", data_file=files[pid])
            for pid in range(2)
        ]
        procs += nodes
        results, out = _one_run(tmp_path, "full")
        assert results["engine"] == "flwr-run" and results["jobs"][0]["participants"] == [2]
        # the server read the run config's file; each client its node's (the server file has none to give)
        assert results["test_class_counts"] == test_counts
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
