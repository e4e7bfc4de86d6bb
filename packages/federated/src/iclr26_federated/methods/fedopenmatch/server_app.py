"""FedOpenMatch's ServerApp for ``flwr run`` (Flower's supported runtime; same code as the in-process Grid).

``context.run_config`` (``[tool.flwr.app.config]`` of the app directory, :mod:`.flwr_app`: every config
field, ``""`` = the preset's value; overridable with ``flwr run ... --run-config "num-rounds=5
variants='fedopenmatch,labeled-only'"``) is converted once into a typed :class:`FedOpenMatchConfig`.

* Launched by a user's ``flwr run``: a new run directory under ``out-dir``, written exactly as
  ``iclr26-federated fedopenmatch`` writes it (report's preset: the ``preset`` key).
* Launched by the CLI's ``ray`` engine (``run-dir`` set): the experiment runs in that existing run
  directory and its raw results go to ``flower-results.json`` there; the CLI evaluates the claims.

``num-clients`` must equal the federation's number of SuperNodes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from iclr26_federated.methods.fedopenmatch.spec import SPEC
from iclr26_federated.methods.fedopenmatch.train import RESULTS_FILE, run_on_grid
from iclr26_federated.methods.fedopenmatch.utils import config_from_run_config
from iclr26_shared.device import resolve_device
from iclr26_shared.io import atomic_write_json, to_jsonable
from iclr26_shared.runner import CommonFlags, execute
from iclr26_shared.runs import RunDir

__all__ = ["app", "main"]

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    """Run the experiment described by the run config on the federation's Grid."""
    cfg, common = config_from_run_config(context.run_config)
    if common.run_dir:  # the CLI's engine: it owns the run directory and the claims
        path = Path(common.run_dir)
        run = RunDir(
            path,
            method=SPEC.name,
            config=cfg,
            seed=common.seed,
            device=resolve_device(common.device),
            quiet=True,
            resumed=True,
            preset=common.preset,
        )
        results = run_on_grid(cfg, run, grid, engine="ray")
        atomic_write_json(path / RESULTS_FILE, to_jsonable(results))
        print(f"results: {path / RESULTS_FILE}")
        return
    spec = dataclasses.replace(SPEC, run=lambda c, r: run_on_grid(c, r, grid, engine="flwr-run"))
    flags = CommonFlags(seed=common.seed, device=common.device, out_dir=Path(common.out_dir), quiet=True)
    run, results, claims = execute(spec, cfg, flags, preset=common.preset)
    print(f"run directory: {run.path.resolve()}")
    answered = [p for j in results["jobs"] for p in j["participants"]]
    print(f"clients answered per round: {answered} of {cfg.num_clients}")
    for c in claims:
        print(f"  [{c.verdict}] {c.claim}: ours={c.ours:.4f} baseline={c.baseline}")
