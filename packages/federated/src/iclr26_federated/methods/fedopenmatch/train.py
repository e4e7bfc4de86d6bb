"""Run FedOpenMatch and its baselines: every (variant, seed) job through one Flower Grid.

``run(cfg, run_dir)`` (the MethodSpec entry) picks the engine:

* ``ray`` — Flower's Simulation Runtime (Ray backend) the way flwr 1.42 supports it: ``flwr run`` of this
  package's app against a local SuperLink started for the run (``run_simulation`` is deprecated); the
  ServerApp runs all jobs in sequence inside the CLI's run directory;
* ``inline`` — the same ServerApp code on an :class:`~.utils.InlineGrid` in this process.

Both reach :func:`run_on_grid`; a user's own ``flwr run`` (simulation or deployment) does too, through
``server_app.app``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from flwr.app import ArrayRecord, ConfigRecord, MetricRecord
from flwr.serverapp import Grid

from iclr26_federated.methods.fedopenmatch.config import (
    PRESETS,
    VARIANTS,
    FedOpenMatchConfig,
    JobParams,
    job_params,
)
from iclr26_federated.methods.fedopenmatch.dataset import client_partition, load_split
from iclr26_federated.methods.fedopenmatch.model import evaluate, make_model, train_server
from iclr26_federated.methods.fedopenmatch.strategy import FedOpenMatchStrategy
from iclr26_federated.nn.models import OpenSetNet
from iclr26_shared.io import read_json
from iclr26_shared.runs import RunDir

#: The raw results the ServerApp writes into the run directory under the ``ray`` engine.
RESULTS_FILE = "flower-results.json"

__all__ = [
    "RESULTS_FILE",
    "dry_run",
    "federate",
    "federation_config",
    "pseudo_label_row",
    "run",
    "run_job",
    "run_on_grid",
    "summarize",
]

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
    """Run one variant with one seed for ``cfg.num_rounds`` rounds, logging every round into ``run``;
    saves the final global model as ``<variant>-seed<seed>``; returns the job's record (JSON values)."""
    params = job_params(cfg, variant, seed, device=_client_device(cfg, run.device))
    record, model = federate(
        grid, params, run.device, log=lambda r, row: run.log(step_offset + r, **row), on_round=on_round
    )
    run.save_model(f"{variant}-seed{seed}", model, extra={"variant": variant, "seed": seed, **record["final"]})
    return record


def federate(
    grid: Grid,
    params: JobParams,
    device: torch.device,
    *,
    log: Callable[[int, dict[str, Any]], None] | None = None,
    on_round: Callable[[dict[str, float]], None] | None = None,
) -> tuple[dict[str, Any], OpenSetNet]:
    """One job on ``grid``: the server's warm-up on D_s, then ``params.num_rounds`` rounds of
    :class:`FedOpenMatchStrategy` (FedAvg of the ClientApps' replies, then ``server_steps`` on D_s), the
    global model evaluated on the test set after the warm-up and after every round.

    Returns ``(record, model)``: the record (JSON values: per-round ``history``, ``final`` metrics,
    failures, participants, seconds) and the final global model (on ``device``). ``log(round, row)``
    receives every round's row, ``on_round(metrics)`` the metrics of rounds ≥ 1.
    """
    split = load_split(params)
    model = make_model(params, split.in_channels).to(device)
    gen = torch.Generator().manual_seed(params.seed * 7919 + 17)
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
        row = {"variant": params.variant, "seed": params.seed, "round": server_round, **m}
        row |= pseudo_label_row(strategy.train_metrics.get(server_round, {}))
        history.append(row)
        if log is not None:
            log(server_round, row)
        if on_round is not None and server_round > 0:
            on_round(m)
        return MetricRecord({**m})

    strategy = FedOpenMatchStrategy(
        server_update,
        federated=params.federated,
        max_failed_fraction=params.max_failed_fraction,
        fraction_train=params.fraction_train,
        fraction_evaluate=0.0,
        min_train_nodes=2,
        min_evaluate_nodes=0,
        min_available_nodes=params.num_clients,
    )
    result = strategy.start(
        grid=grid,
        initial_arrays=ArrayRecord({k: v.detach().cpu() for k, v in model.state_dict().items()}),
        num_rounds=params.num_rounds,
        train_config=ConfigRecord(params.to_record()),
        evaluate_fn=evaluate_fn,
    )
    load(result.arrays)  # the final global model (evaluate_fn loaded it too; explicit for clarity)
    rounds = range(1, params.num_rounds + 1)
    record = {
        "variant": params.variant,
        "seed": params.seed,
        "final": {k: history[-1][k] for k in _METRICS},
        "history": history,
        "failures": strategy.failures,
        "participants": [strategy.participants.get(r, 0) for r in rounds],
        "round_seconds": [strategy.round_seconds.get(r, math.nan) for r in rounds],
        "client_metrics": {str(r): dict(m) for r, m in result.train_metrics_clientapp.items()},
        "wall_s": time.perf_counter() - t0,
    }
    return record, model


def pseudo_label_row(metrics: dict[str, float]) -> dict[str, float | None]:
    """A round's pseudo-label diagnostics from the clients' aggregated metrics (fractions of all their
    images): pass rate, precision ``Σ correct / Σ pass`` (None when nothing passed), the share of passed
    labels that are unknown-class images, the rate whose confidence alone passes τ_in, mean confidence."""
    if "pl_pass_rate" not in metrics:
        return {}
    passed = metrics["pl_pass_rate"]
    row: dict[str, float | None] = {
        "pl_pass_rate": passed,
        "pl_conf_rate": metrics.get("pl_conf_rate"),
        "pl_conf": metrics.get("pl_conf"),
    }
    if "pl_correct_rate" in metrics:
        row["pl_precision"] = metrics["pl_correct_rate"] / passed if passed > 0 else None
        row["pl_unknown_share"] = metrics.get("pl_unknown_rate", 0.0) / passed if passed > 0 else None
    return row


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
    """Per-round and final open-set balanced accuracy. With several seeds per variant: their mean and a
    ± 1 sample-std band / error bar (the std of :func:`summarize`); with one seed: that seed's values and no
    band, and the titles say which of the two is drawn."""
    from iclr26_shared.plotting import plot_bars, plot_curves

    curves, bands = {}, {}
    n_seeds = min(s["n_seeds"] for s in summary.values()) if summary else 1
    for v in summary:
        hs = [j["history"] for j in jobs if j["variant"] == v]
        arr = np.asarray([[row["open_bacc"] for row in h] for h in hs], dtype=float)
        mean = arr.mean(0)
        rounds = list(range(arr.shape[1]))
        curves[v] = (rounds, mean)
        if len(arr) > 1:
            std = arr.std(0, ddof=1)
            bands[v] = (mean - std, mean + std)
    drawn = f"mean ± std over {n_seeds} seeds" if n_seeds > 1 else f"seed {run.seed} (one seed, no spread)"
    plot_curves(
        run.figure_path("open_bacc_per_round"),
        curves,
        bands=bands or None,
        xlabel="round",
        ylabel="open-set balanced accuracy",
        title=f"{Path(cfg.data_file).name} K={cfg.known_classes}; {drawn}"
        if cfg.data_file
        else f"{cfg.dataset} {cfg.known_classes}/{cfg.unknown_classes}@{cfg.labels_per_class}, "
        f"Dir({cfg.dirichlet_alpha}); {drawn}",
    )
    plot_bars(
        run.figure_path("final_open_bacc"),
        {v: s["open_bacc_mean"] for v, s in summary.items()},
        errors={v: s["open_bacc_std"] for v, s in summary.items()} if n_seeds > 1 else None,
        ylabel="open-set balanced accuracy",
        title=f"final round, {drawn}",
    )


@contextlib.contextmanager
def flower_log_to_file(path: Path) -> Iterator[None]:
    """Send Flower's logger (strategy banners, the ``fraction_evaluate`` warning, per-round INFO lines) to
    ``path`` instead of the terminal while the block runs; the handlers are restored afterwards."""
    path.parent.mkdir(parents=True, exist_ok=True)
    log = logging.getLogger("flwr")
    saved = (list(log.handlers), log.level, log.propagate)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.handlers = [handler]
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        yield
    finally:
        log.handlers, log.level, log.propagate = saved[0], saved[1], saved[2]
        handler.close()


def run_on_grid(cfg: FedOpenMatchConfig, run: RunDir, grid: Grid, engine: str | None = None) -> dict[str, Any]:
    """Run every (variant, seed) job on ``grid``; checkpoints after each job (``--resume`` skips done ones).

    ``engine`` names the runtime in the results (default ``cfg.engine``).
    """
    jobs = [(v, run.seed + s) for s in range(cfg.num_seeds) for v in cfg.variants]
    ckpt = run.load_checkpoint()
    done: list[dict[str, Any]] = list(ckpt[1]["jobs"]) if ckpt is not None else []
    t0 = time.perf_counter()
    with flower_log_to_file(run.path / "flower" / "flower.log"):
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
    summary = summarize(cfg, done)
    _figures(run, cfg, done, summary)
    test_y = load_split(job_params(cfg, cfg.variants[0], run.seed)).test_y
    # test images per open-set class (known 0..K-1, then every unknown image as class K): the chance band
    counts = np.bincount(np.minimum(test_y, cfg.known_classes), minlength=cfg.known_classes + 1)
    known = counts[: cfg.known_classes]
    round_s = [s for j in done for s in j["round_seconds"] if not math.isnan(s)]
    return {
        "variants": summary,
        "known_classes": cfg.known_classes,
        "test_class_counts": [int(n) for n in counts],
        # the trivial answer's closed-set accuracy: the majority known class's share of the test images
        "closed_acc_trivial": float(known.max() / max(known.sum(), 1)),
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


def federation_config(cfg: FedOpenMatchConfig, device: torch.device) -> str:
    """``flwr run --federation-config`` for Flower's Simulation Runtime (Ray backend): M virtual SuperNodes,
    ``client_cpus`` per ClientApp, GPUs only on CUDA runs, Ray's CPUs (``ray_cpus``, 0 = all)."""
    gpus = cfg.client_gpus if device.type == "cuda" else 0.0
    parts = [
        f"num-supernodes={cfg.num_clients}",
        f"client-resources-num-cpus={cfg.client_cpus}",
        f"client-resources-num-gpus={float(gpus)!r}",
        f"init-args-num-cpus={cfg.ray_cpus or (os.cpu_count() or 1)}",
        "init-args-log-to-driver=false",
    ]
    if gpus > 0:
        parts.append(f"init-args-num-gpus={max(1, torch.cuda.device_count())}")
    return " ".join(parts)


def _run_ray(cfg: FedOpenMatchConfig, run: RunDir) -> dict[str, Any]:
    """Flower's supported runtime for flwr 1.42: a local SuperLink in simulation mode (its own free ports,
    state under ``<run>/flower``) and ``flwr run`` of this package's app (the packaged app directory,
    written to ``<run>/flower/app``: it names the installed components, so an installed wheel runs it) with
    every config field and ``run-dir`` in the run config. The ServerApp writes its results into this run
    directory; Flower's and Ray's output go to ``<run>/flower/*.log`` (not the terminal). Every started
    process is stopped by PID. A user's ``data_file`` is read here first, so a bad one is a one-line error
    before any Flower process starts."""
    from iclr26_federated.methods.fedopenmatch.utils import (
        RunConfigCommon,
        flwr_run,
        log_tail,
        run_config_from_config,
        start_superlink,
    )

    if cfg.data_file:
        load_split(job_params(cfg, cfg.variants[0], run.seed))  # DataError / ConfigError naming the field
    home = run.path / "flower"
    out_file = run.path / RESULTS_FILE
    out_file.unlink(missing_ok=True)
    common = RunConfigCommon(
        preset=run.preset if run.preset in PRESETS else "smoke",  # type: ignore[arg-type]
        seed=run.seed,
        device=str(run.device),
        out_dir=str(run.path.parent.parent),
        run_dir=str(run.path.resolve()),
    )
    run_config = run_config_from_config(cfg, common)
    total = len(cfg.variants) * cfg.num_seeds * cfg.num_rounds
    t0 = time.perf_counter()
    link, port = start_superlink(home, home / "superlink.log", simulation=True)
    try:
        with run.progress(total, "fedopenmatch") as bar:
            seen = [0]

            def poll() -> None:
                rows = [r for r in run.read_metrics() if r.get("round", 0) > 0]
                for r in rows[seen[0] :]:
                    bar.advance(**{f"{r['variant']} open_bacc": r["open_bacc"]})
                seen[0] = max(seen[0], len(rows))

            code = flwr_run(
                home,
                port,
                run_config,
                home / "flwr-run.log",
                federation_config=federation_config(cfg, run.device),
                poll=poll,
            )
    finally:
        link.stop()
    if code != 0 or not out_file.is_file():
        raise RuntimeError(
            f"flwr run ended with exit code {code} and no {RESULTS_FILE}; Flower's logs are in {home}:\n"
            + log_tail(home / "flwr-run.log")
        )
    results = read_json(out_file, what="Flower results")
    results["simulation_wall_s"] = time.perf_counter() - t0
    return results


def run(cfg: FedOpenMatchConfig, run_dir: RunDir) -> dict[str, Any]:
    """MethodSpec entry: run all jobs on the configured engine and return the results dict."""
    return _run_inline(cfg, run_dir) if cfg.engine == "inline" else _run_ray(cfg, run_dir)


def dry_run(cfg: FedOpenMatchConfig, device: torch.device) -> dict[str, Any]:
    """``--dry-run``: the preset's split (its real data set) and FedOpenMatch's network and SGD optimizer at
    the preset's sizes, one client step (``L_m`` on 2 unlabelled images with the round's frozen
    pseudo-labels), one server step (``L_s`` on 2 labelled images) and one evaluation at batch 2.

    Returns ``parameters`` (trainable), ``train_loss`` (the client step's ``L_m``), ``server_loss`` and the
    evaluation's ``open_bacc``/``closed_acc`` on the 2 test images.
    """
    from iclr26_federated.data.augment import strong_view, weak_view
    from iclr26_federated.methods.fedopenmatch.model import client_loss, make_pseudo_labels, server_loss

    params = dataclasses.replace(job_params(cfg, "fedopenmatch", 0, device=str(device)), batch_size=2)
    split = load_split(params)
    model = make_model(params, split.in_channels).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=params.lr, momentum=params.momentum, nesterov=params.momentum > 0)
    gen = torch.Generator().manual_seed(0)
    images = client_partition(params, 0)[:2]
    pl = make_pseudo_labels(model, images, params, device)
    model.train()
    xw = weak_view(torch.from_numpy(images), gen, hflip=params.hflip, device=device)
    xs = strong_view(torch.from_numpy(images), gen, hflip=params.hflip, device=device)
    loss, _ = client_loss(model, xw, xs, pl, params)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    x = weak_view(torch.from_numpy(split.server_x[:2]), gen, hflip=params.hflip, device=device)
    s_loss = server_loss(model, x, torch.from_numpy(split.server_y[:2]).to(device), params)
    opt.zero_grad(set_to_none=True)
    s_loss.backward()
    opt.step()
    m = evaluate(model, split.test_x[:2], split.test_y[:2], params, device, chunk=2)
    return {
        "parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "train_loss": float(loss.detach()),
        "server_loss": float(s_loss.detach()),
        "open_bacc": m.open_bacc,
        "closed_acc": m.closed_acc,
    }
