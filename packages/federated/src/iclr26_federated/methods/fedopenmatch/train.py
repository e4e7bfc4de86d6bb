"""Run FedOpenMatch and its baselines: every (variant, seed) job through one Flower Grid.

``run(cfg, run_dir)`` (the MethodSpec entry) picks the engine:

* ``ray`` — Flower's simulation engine: one ``flwr.simulation.run_simulation`` call (Ray backend,
  ``client_resources.num_cpus = cfg.client_cpus``) whose ServerApp runs all jobs in sequence;
* ``inline`` — the same ServerApp code on an :class:`~.utils.InlineGrid` in this process.

``flwr run`` reaches :func:`run_on_grid` through ``server_app.app`` instead (deployment-ready path).
"""

from __future__ import annotations

import logging
import math
import os
import time
from typing import Any

import numpy as np
import torch
from flwr.app import ArrayRecord, ConfigRecord, MetricRecord
from flwr.serverapp import Grid

from iclr26_federated.methods.fedopenmatch.config import VARIANTS, FedOpenMatchConfig, job_params
from iclr26_federated.methods.fedopenmatch.dataset import load_split
from iclr26_federated.methods.fedopenmatch.model import evaluate, make_model, train_server
from iclr26_federated.methods.fedopenmatch.strategy import FedOpenMatchStrategy
from iclr26_shared.runs import RunDir

__all__ = ["run", "run_job", "run_on_grid", "summarize"]

_METRICS = ("open_bacc", "closed_acc", "unknown_recall", "known_recall")


def _client_device(cfg: FedOpenMatchConfig, device: torch.device) -> str:
    if device.type == "cuda" and (cfg.engine == "inline" or cfg.client_gpus > 0):
        return str(device)
    return "cpu"


def run_job(
    grid: Grid,
    cfg: FedOpenMatchConfig,
    variant: str,
    seed: int,
    run: RunDir,
    *,
    step_offset: int = 0,
    on_round: Any = None,
) -> dict[str, Any]:
    """Run one variant with one seed for ``cfg.num_rounds`` rounds; returns its record (JSON values)."""
    params = job_params(cfg, variant, seed, device=_client_device(cfg, run.device))
    split = load_split(params)
    device = run.device
    model = make_model(params, split.in_channels).to(device)
    gen = torch.Generator().manual_seed(seed * 7919 + 17)
    t0 = time.perf_counter()
    train_server(model, split.server_x, split.server_y, params, params.warmup_steps, gen, device)
    history: list[dict[str, Any]] = []

    def load(arrays: ArrayRecord) -> None:
        state = {k: v.to(device=device, dtype=torch.float32) for k, v in arrays.to_torch_state_dict().items()}
        model.load_state_dict(state)

    def server_update(arrays: ArrayRecord, server_round: int) -> ArrayRecord:
        load(arrays)
        train_server(model, split.server_x, split.server_y, params, params.server_steps, gen, device, server_round)
        return ArrayRecord({k: v.detach().cpu() for k, v in model.state_dict().items()})

    def evaluate_fn(server_round: int, arrays: ArrayRecord) -> MetricRecord:
        load(arrays)
        m = evaluate(model, split.test_x, split.test_y, params, device).to_dict()
        row = {"variant": variant, "seed": seed, "round": server_round, **m}
        history.append(row)
        run.log(step_offset + server_round, **row)
        if on_round is not None and server_round > 0:
            on_round(m)
        return MetricRecord({**m})

    strategy = FedOpenMatchStrategy(
        server_update,
        federated=params.federated,
        fraction_train=cfg.fraction_train,
        fraction_evaluate=0.0,
        min_train_nodes=2,
        min_evaluate_nodes=0,
        min_available_nodes=cfg.num_clients,
    )
    result = strategy.start(
        grid=grid,
        initial_arrays=ArrayRecord({k: v.detach().cpu() for k, v in model.state_dict().items()}),
        num_rounds=cfg.num_rounds,
        train_config=ConfigRecord(params.to_record()),
        evaluate_fn=evaluate_fn,
    )
    client_metrics = {str(r): dict(m) for r, m in result.train_metrics_clientapp.items()}
    return {
        "variant": variant,
        "seed": seed,
        "final": {k: history[-1][k] for k in _METRICS},
        "history": history,
        "failures": strategy.failures,
        "participants": [strategy.participants.get(r, 0) for r in range(1, cfg.num_rounds + 1)],
        "round_seconds": [strategy.round_seconds.get(r, math.nan) for r in range(1, cfg.num_rounds + 1)],
        "client_metrics": client_metrics,
        "wall_s": time.perf_counter() - t0,
    }


def summarize(cfg: FedOpenMatchConfig, jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean ± std (sample std over seeds) of each variant's final metrics."""
    out: dict[str, Any] = {}
    for v in [v for v in VARIANTS if v in cfg.variants]:
        rows = [j["final"] for j in jobs if j["variant"] == v]
        if not rows:
            continue
        stats: dict[str, Any] = {"n_seeds": len(rows)}
        for k in _METRICS:
            vals = np.asarray([r[k] for r in rows], dtype=float)
            stats[f"{k}_mean"] = float(vals.mean())
            stats[f"{k}_std"] = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
            stats[k] = [float(x) for x in vals]
        out[v] = stats
    return out


def _figures(run: RunDir, cfg: FedOpenMatchConfig, jobs: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    from iclr26_shared.plotting import plot_bars, plot_curves

    curves, bands = {}, {}
    for v in summary:
        hs = [j["history"] for j in jobs if j["variant"] == v]
        arr = np.asarray([[row["open_bacc"] for row in h] for h in hs], dtype=float)
        mean, std = arr.mean(0), arr.std(0)
        rounds = list(range(arr.shape[1]))
        curves[v] = (rounds, mean)
        bands[v] = (mean - std, mean + std)
    plot_curves(
        run.figure_path("open_bacc_per_round"),
        curves,
        bands=bands,
        xlabel="round",
        ylabel="open-set balanced accuracy",
        title=f"{cfg.dataset} {cfg.known_classes}/{cfg.unknown_classes}@{cfg.labels_per_class}, "
        f"Dir({cfg.dirichlet_alpha})",
    )
    plot_bars(
        run.figure_path("final_open_bacc"),
        {v: s["open_bacc_mean"] for v, s in summary.items()},
        errors={v: s["open_bacc_std"] for v, s in summary.items()},
        ylabel="open-set balanced accuracy",
        title="final round, mean ± std over seeds",
    )


def run_on_grid(cfg: FedOpenMatchConfig, run: RunDir, grid: Grid, engine: str | None = None) -> dict[str, Any]:
    """Run every (variant, seed) job on ``grid``; checkpoints after each job (``--resume`` skips done ones).

    ``engine`` names the runtime in the results (default ``cfg.engine``).
    """
    jobs = [(v, run.seed + s) for s in range(cfg.num_seeds) for v in cfg.variants]
    ckpt = run.load_checkpoint()
    done: list[dict[str, Any]] = list(ckpt[1]["jobs"]) if ckpt is not None else []
    flwr_log = logging.getLogger("flwr")
    level = flwr_log.level
    flwr_log.setLevel(logging.WARNING)
    t0 = time.perf_counter()
    try:
        with run.progress(len(jobs) * cfg.num_rounds, "fedopenmatch", completed=len(done) * cfg.num_rounds) as bar:
            for j, (variant, seed) in enumerate(jobs):
                if j < len(done):
                    continue
                rec = run_job(
                    grid,
                    cfg,
                    variant,
                    seed,
                    run,
                    step_offset=j * (cfg.num_rounds + 1),
                    on_round=lambda m, v=variant: bar.advance(**{f"{v} open_bacc": m["open_bacc"]}),
                )
                done.append(rec)
                # the checkpoint's step is the job's last metrics step, so a resume keeps exactly its rows
                run.save_checkpoint((j + 1) * (cfg.num_rounds + 1) - 1, {"jobs": done})
    finally:
        flwr_log.setLevel(level)
    summary = summarize(cfg, done)
    _figures(run, cfg, done, summary)
    round_s = [s for j in done for s in j["round_seconds"] if not math.isnan(s)]
    return {
        "variants": summary,
        "known_classes": cfg.known_classes,
        "jobs": done,
        "failures": [{"variant": j["variant"], "seed": j["seed"], **f} for j in done for f in j["failures"]],
        "engine": engine or cfg.engine,
        "seconds_per_round": float(np.mean(round_s)) if round_s else math.nan,
        "experiment_wall_s": time.perf_counter() - t0,
    }


def _run_inline(cfg: FedOpenMatchConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_federated.methods.fedopenmatch.client_app import app as client_app
    from iclr26_federated.methods.fedopenmatch.utils import InlineGrid

    return run_on_grid(cfg, run, InlineGrid(client_app, cfg.num_clients))


def ray_backend_config(cfg: FedOpenMatchConfig, device: torch.device) -> dict[str, Any]:
    """Flower simulation backend config: one ``client_cpus`` per virtual client, GPUs only on CUDA runs."""
    gpus = cfg.client_gpus if device.type == "cuda" else 0.0
    init: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
    init["num_cpus"] = cfg.ray_cpus or (os.cpu_count() or 1)
    if gpus > 0:
        init["num_gpus"] = max(1, torch.cuda.device_count())
    return {"client_resources": {"num_cpus": cfg.client_cpus, "num_gpus": gpus}, "init_args": init}


def _run_ray(cfg: FedOpenMatchConfig, run: RunDir) -> dict[str, Any]:
    from flwr.serverapp import ServerApp
    from flwr.simulation import run_simulation

    from iclr26_federated.methods.fedopenmatch.client_app import app as client_app

    os.environ.setdefault("FLWR_DISABLE_UPDATE_CHECK", "1")
    out: dict[str, Any] = {}
    server = ServerApp()

    @server.main()
    def _main(grid: Grid, context: Any) -> None:
        try:
            out["results"] = run_on_grid(cfg, run, grid)
        except BaseException as err:  # re-raised in the caller's thread below
            out["error"] = err

    t0 = time.perf_counter()
    run_simulation(
        server_app=server,
        client_app=client_app,
        num_supernodes=cfg.num_clients,
        backend_config=ray_backend_config(cfg, run.device),  # type: ignore[arg-type]
    )
    if "error" in out:
        raise out["error"]
    if "results" not in out:
        raise RuntimeError("Flower's simulation ended without running the ServerApp (see the log above)")
    results = out["results"]
    results["simulation_wall_s"] = time.perf_counter() - t0
    return results


def run(cfg: FedOpenMatchConfig, run_dir: RunDir) -> dict[str, Any]:
    """MethodSpec entry: run all jobs on the configured engine and return the results dict."""
    return _run_inline(cfg, run_dir) if cfg.engine == "inline" else _run_ray(cfg, run_dir)
