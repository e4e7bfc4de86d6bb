"""FedOpenMatch's ServerApp for ``flwr run`` (Flower's deployment path; same code as the CLI's engines).

``context.run_config`` (``[tool.flwr.app.config]`` of ``packages/federated/pyproject.toml``, overridable
with ``flwr run ... --run-config "num-rounds=5 variants='fedopenmatch,labeled-only'"``) is converted once
into a typed :class:`FedOpenMatchConfig`; the run directory is written under ``out-dir`` exactly as
``iclr26-federated fedopenmatch`` writes it. ``num-clients`` must equal the federation's number of
SuperNodes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from iclr26_federated.methods.fedopenmatch.spec import SPEC
from iclr26_federated.methods.fedopenmatch.train import run_on_grid
from iclr26_federated.methods.fedopenmatch.utils import config_from_run_config
from iclr26_shared.runner import CommonFlags, execute

__all__ = ["app", "main"]

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    """Run the experiment described by the run config on the federation's Grid."""
    cfg, common = config_from_run_config(context.run_config)
    spec = dataclasses.replace(SPEC, run=lambda c, r: run_on_grid(c, r, grid, engine="flwr-run"))
    flags = CommonFlags(seed=common["seed"], device=common["device"], out_dir=Path(common["out_dir"]), quiet=True)
    run, _, claims = execute(spec, cfg, flags, preset=None)
    print(f"run directory: {run.path.resolve()}")
    for c in claims:
        print(f"  [{c.verdict}] {c.claim}: ours={c.ours:.4f} baseline={c.baseline}")
