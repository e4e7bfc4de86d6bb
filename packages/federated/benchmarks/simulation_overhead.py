"""Seconds per round of FedOpenMatch on Flower's simulation engine (Ray), on its deployment engine (a real
SuperLink and one SuperNode process per client) and in a plain loop: the same ServerApp/ClientApp code.

For M = 2, 4, 8 clients the same tiny job (FedOpenMatch, small CNN, 60 unlabelled images per client) runs
through the ServerApp/strategy/ClientApp twice: on Flower's Simulation Runtime (``engine="ray"``: a local
SuperLink and ``flwr run``, one CPU per virtual client) and on :class:`InlineGrid`, which calls the
ClientApp in a plain loop in this process, and then on Flower's deployment engine: ``flower-superlink
--insecure`` with M ``flower-supernode --insecure`` processes (``partition-id``/``num-partitions`` node
config) and ``flwr run`` against them, as a user runs it across machines. Reported per engine: mean
seconds per round after the first (warm), the first round (Ray actors import torch then), and the whole
wall time (SuperLink and Ray start-up included). ``overhead`` is Ray's warm seconds per round over the
loop's; ``deployment_vs_simulation`` is the deployment engine's warm seconds per round over the simulation
engine's. Timing: run it alone on an idle machine.

    uv run python packages/federated/benchmarks/simulation_overhead.py [--quick] [--out runs/bench/x.json]
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from iclr26_federated.methods.fedopenmatch.config import PRESETS
from iclr26_federated.methods.fedopenmatch.spec import SPEC
from iclr26_federated.methods.fedopenmatch.utils import (
    FlowerProcess,
    flwr_run,
    log_tail,
    start_superlink,
    start_supernode,
)
from iclr26_shared.bench import bench_main
from iclr26_shared.runner import CommonFlags, execute


def _one(engine: str, clients: int, rounds: int, out: Path) -> dict[str, Any]:
    cfg = dataclasses.replace(
        PRESETS["smoke"],
        engine=engine,  # type: ignore[arg-type]
        num_clients=clients,
        num_rounds=rounds,
        max_client_pool=60 * clients,
        variants=("fedopenmatch",),
        width=4,
        warmup_steps=2,
        server_steps=2,
    )
    t0 = time.perf_counter()
    _, results, _ = execute(SPEC, cfg, CommonFlags(seed=0, device="cpu", out_dir=out, quiet=True))
    wall = time.perf_counter() - t0
    secs = results["jobs"][0]["round_seconds"]
    warm = secs[1:] or secs
    return {
        "seconds_per_round": sum(warm) / len(warm),
        "first_round_s": secs[0],
        "rounds": rounds,
        "wall_s": wall,
    }


def _deployment(clients: int, rounds: int, out: Path) -> dict[str, Any]:
    """The same job on a SuperLink + ``clients`` SuperNodes (subprocesses on free ports, stopped by PID)."""
    home, run_out, log = out / f"flwr-home-{clients}", out / f"deployment-{clients}", out / f"flwr-{clients}.log"
    run_config = {
        "out-dir": str(run_out),
        "variants": "fedopenmatch",
        "num-clients": clients,
        "num-rounds": rounds,
        "max-client-pool": 60 * clients,
        "width": 4,
        "warmup-steps": 2,
        "server-steps": 2,
    }
    procs: list[FlowerProcess] = []
    t0 = time.perf_counter()
    try:
        link, port = start_superlink(home, out / f"superlink-{clients}.log", simulation=False)
        procs.append(link)
        for pid in range(clients):
            procs.append(start_supernode(home, port, pid, clients, out / f"supernode-{clients}-{pid}.log"))
        startup = time.perf_counter() - t0
        code = flwr_run(home, port, run_config, log, timeout=1800)
        if code != 0:
            raise RuntimeError(f"flwr run exited {code}:\n{log_tail(log)}")
    finally:
        for p in reversed(procs):
            p.stop()
    wall = time.perf_counter() - t0
    (run_dir,) = (run_out / "fedopenmatch").iterdir()
    secs = json.loads((run_dir / "results.json").read_text())["jobs"][0]["round_seconds"]
    warm = secs[1:] or secs
    return {
        "seconds_per_round": sum(warm) / len(warm),
        "first_round_s": secs[0],
        "rounds": rounds,
        "wall_s": wall,
        "startup_s": startup,
    }


def run(quick: bool) -> dict[str, Any]:
    os.environ.setdefault("FLWR_DISABLE_UPDATE_CHECK", "1")
    sizes = (2,) if quick else (2, 4, 8)
    rounds = 2 if quick else 4
    out: dict[str, Any] = {"cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        for m in sizes:
            loop = _one("inline", m, rounds, Path(tmp))
            ray = _one("ray", m, rounds, Path(tmp))
            deployment = _deployment(m, rounds, Path(tmp))
            out[f"clients_{m}"] = {
                "loop": loop,
                "ray": ray,
                "deployment": deployment,
                "overhead": ray["seconds_per_round"] / max(loop["seconds_per_round"], 1e-9),
                "deployment_vs_simulation": deployment["seconds_per_round"] / max(ray["seconds_per_round"], 1e-9),
                "startup_s": ray["wall_s"] - loop["wall_s"],
            }
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("federated-simulation-overhead", run))
