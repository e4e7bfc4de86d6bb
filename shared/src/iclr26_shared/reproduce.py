"""``iclr26 reproduce``: every (method, seed) claim experiment, scheduled locally or on Ray, one report.

Each (method, seed) is one run of :func:`~iclr26_shared.runner.execute` in its own run directory under
``<out>/<method>/``. Three schedulers share this module:

* ``serial`` (``--jobs 1``): one run after the other in this process;
* ``process`` (``--jobs N``): a local pool of N spawned processes (no dependency beyond the stdlib), each
  with ``CPUs // N`` torch/OpenMP threads so that the pool does not oversubscribe the machine. The CLI's
  default is one process per CPU this process may use (``jobs=None`` here);
* ``ray`` (``--backend ray [--address auto|HOST:PORT]``): every run is a Ray task with the resources its
  spec declares (:class:`~iclr26_shared.spec.Resources`); without ``--address`` a local Ray starts with
  this machine's CPUs.

Runs of methods whose spec is ``exclusive`` (timing claims) run after the others, one at a time, with
the machine (a Ray node) to themselves. ``REPORT.md`` and ``report.json`` are rewritten as runs finish, so
a killed reproduce keeps every finished row, and ``--resume DIR`` skips finished runs and resumes
unfinished ones from their checkpoints. Claims over seeds are combined by :mod:`iclr26_shared.verdicts`.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import socket
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iclr26_shared.config import latest_run_dir
from iclr26_shared.errors import Iclr26Error, UsageError
from iclr26_shared.io import atomic_write_json, atomic_write_text, read_json, unique_dir, utc_stamp
from iclr26_shared.runner import CommonFlags, execute, format_number, verdict_cell
from iclr26_shared.spec import PRESET_NAMES, VERDICTS, Claim, MethodSpec
from iclr26_shared.tables import markdown_table
from iclr26_shared.verdicts import CONFIDENCE, ClaimSummary, summarize_seeds

__all__ = ["BACKENDS", "ReproducePlan", "RunOutcome", "available_cpus", "reproduce", "write_reproduce_report"]

BACKENDS: tuple[str, ...] = ("process", "ray")


@dataclass
class RunOutcome:
    """What one (method, seed) run gave."""

    method: str
    domain: str
    paper: str
    seed: int
    ok: bool
    seconds: float
    claims: list[Claim] = field(default_factory=list)
    run_dir: str | None = None
    error: str | None = None
    skipped: str | None = None
    alone: bool = False
    bad_input: bool = False  # the error is an Iclr26Error (bad config, data file, flag): exit code 2

    def to_dict(self) -> dict[str, Any]:
        """JSON form (report.json)."""
        return {
            "method": self.method,
            "domain": self.domain,
            "paper": self.paper,
            "seed": self.seed,
            "ok": self.ok,
            "seconds": round(self.seconds, 2),
            "run_dir": self.run_dir,
            "error": self.error,
            "skipped": self.skipped,
            "alone": self.alone,
            "claims": [c.to_dict() for c in self.claims],
        }


def run_one(
    spec: MethodSpec[Any], preset: str, flags: CommonFlags, alone: bool = False, config: Any = None
) -> RunOutcome:
    """One (method, seed) run of ``config`` (default: the preset's); never raises (a failure is an outcome
    with ``error``; bad input is one line, anything else adds the end of its traceback)."""
    t0 = time.monotonic()
    try:
        cfg = spec.preset(preset) if config is None else config
        run, _, claims = execute(spec, cfg, flags, preset=preset, shares_cpus=not alone)
    except Exception as err:
        bad_input = isinstance(err, Iclr26Error)
        error = str(err) if bad_input else f"{type(err).__name__}: {err}"
        detail = "" if bad_input else "\n" + traceback.format_exc(limit=-3)
        print(f"[reproduce] {spec.name} seed {flags.seed} FAILED: {error}{detail}", file=sys.stderr)
        return RunOutcome(
            spec.name,
            spec.domain,
            spec.paper,
            flags.seed,
            False,
            time.monotonic() - t0,
            error=error,
            alone=alone,
            bad_input=bad_input,
        )
    dt = time.monotonic() - t0
    return RunOutcome(spec.name, spec.domain, spec.paper, flags.seed, True, dt, claims, str(run.path), alone=alone)


# --------------------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReproducePlan:
    """What a reproduce runs (stored in report.json so ``--resume`` runs the same plan)."""

    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    preset: str
    backend: str
    device: str = "auto"

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "methods": list(self.methods),
            "seeds": list(self.seeds),
            "preset": self.preset,
            "backend": self.backend,
            "device": self.device,
        }


def _summaries(outcomes: Sequence[RunOutcome]) -> list[tuple[str, ClaimSummary]]:
    by_method: dict[str, list[RunOutcome]] = {}
    for o in outcomes:
        by_method.setdefault(o.method, []).append(o)
    out: list[tuple[str, ClaimSummary]] = []
    for method, runs in by_method.items():
        runs = sorted((r for r in runs if r.ok), key=lambda r: r.seed)
        out += [(method, s) for s in summarize_seeds([(r.seed, r.claims) for r in runs])]
    return out


def _pm(mean: float, std: float, n: int) -> str:
    return format_number(mean) if n <= 1 else f"{format_number(mean)} ± {format_number(std)}"


_READING = f"""How to read the verdicts: each claim compares ours with the baseline measured in the same seed's
run (or with a fixed threshold), in the direction the paper claims. With several seeds the gain is
paired per seed and its {CONFIDENCE:.0%} Student-t interval over seeds decides: **holds** when the
whole interval clears the claim's margin, **fails** when it lies wholly below, _inconclusive_ when it
straddles the margin (the gap is inside seed noise at this budget), when both sides sit at chance, or
when a timing claim was measured while other runs or processes shared the cores. With one seed the verdict is a
single run's (holds/fails on the sign of the gain) and says nothing about noise."""


def _forest(out: Path, summaries: Sequence[tuple[str, ClaimSummary]]) -> str:
    """Draw ``figures/claims.png`` (one row per claim, coloured by verdict); returns its relative path."""
    from iclr26_shared.plotting import plot_forest

    rows = []
    for method, s in summaries:
        label = f"{method}: {s.claim}"
        label = label if len(label) <= 70 else label[:67] + "..."
        rows.append((label, s.gain_mean, s.gain_low, s.gain_high, s.margin, s.verdict))
    plot_forest(out / "figures" / "claims.png", rows)
    return "figures/claims.png"


def _wall_times(outcomes: Sequence[RunOutcome], plan: ReproducePlan, seconds: float) -> str:
    """Per-method wall time (sum over its seeds' runs, and per seed) and the whole reproduce's total."""
    rows = []
    for method in plan.methods:
        runs = [o for o in outcomes if o.method == method and not o.skipped]
        if not runs:
            continue
        total = sum(o.seconds for o in runs)
        rows.append([method, len(runs), f"{total:.1f}", f"{total / len(runs):.1f}"])
    summed = sum(o.seconds for o in outcomes if not o.skipped)
    rows.append(["**total**", sum(int(r[1]) for r in rows), f"{summed:.1f}", "—"])
    table = markdown_table(["method", "runs", "wall time (s)", "per seed (s)"], rows)
    return table + f"\n\nThe reproduce took {seconds:.0f} s end to end (runs in parallel overlap in the sum above)."


def write_reproduce_report(out: Path, outcomes: Sequence[RunOutcome], plan: ReproducePlan, *, seconds: float) -> Path:
    """Write REPORT.md and report.json into ``out``; returns the REPORT.md path."""
    summaries = _summaries(outcomes)
    counts = {v: sum(s.verdict == v for _, s in summaries) for v in VERDICTS}
    n_seeds = len(plan.seeds)
    single = n_seeds == 1
    done = sum(o.ok for o in outcomes)
    lines = [
        "# iclr26 reproduce report",
        "",
        f"Preset `{plan.preset}` · seeds {', '.join(map(str, plan.seeds))} · backend `{plan.backend}` · "
        f"{len(plan.methods)} methods · {done}/{len(plan.methods) * n_seeds} runs finished · "
        f"claims: {counts['holds']} hold, {counts['fails']} fail, {counts['inconclusive']} inconclusive · "
        f"{seconds:.0f} s · {_dt.datetime.now(_dt.UTC).isoformat(timespec='seconds')}",
        "",
    ]
    if plan.preset == "smoke":
        lines += ["The `smoke` preset only checks that every pipeline runs: its claim verdicts mean nothing.", ""]
    if single:
        lines += ["**Single seed**: each verdict is one run's; rerun with `--seeds 3` (or more) for intervals.", ""]
    lines += [_READING, "", "## Claims", ""]
    if summaries:
        lines += [f"![claims: gain and interval against the margin, by verdict]({_forest(out, summaries)})", ""]
        if single:
            head = ["method", "claim", "metric", "paper", "ours", "reference", "gain", "verdict (single seed)"]
        else:
            head = ["method", "claim", "metric", "paper", "ours (mean ± sd)", "reference (mean ± sd)"]
            head += [f"gain [{CONFIDENCE:.0%} CI]", "verdict", "seeds"]
        rows = []
        for method, s in summaries:
            claim = s.claim + (" (timing)" if s.timing else "")
            metric = f"{s.metric} ({s.better} is better" + (f", margin {s.margin:g})" if s.margin else ")")
            ref = ("threshold " if s.absolute else "") + _pm(s.ref_mean, s.ref_std, s.n)
            verdict = verdict_cell(s.verdict) + (f" ({s.note})" if s.note else "")
            row = [method, claim, metric, s.paper or "—", _pm(s.ours_mean, s.ours_std, s.n), ref]
            if single:
                row += [format_number(s.gain_mean), verdict]
            else:
                ci = f"{format_number(s.gain_mean)} [{format_number(s.gain_low)}, {format_number(s.gain_high)}]"
                row += [ci, verdict, str(s.n)]
            rows.append(row)
        lines.append(markdown_table(head, rows))
    else:
        lines.append("No claims were measured.")
    lines += ["", "## Runs", ""]
    runs = []
    for o in sorted(outcomes, key=lambda o: (plan.methods.index(o.method) if o.method in plan.methods else 0, o.seed)):
        if o.ok and o.run_dir:
            rel = os.path.relpath(o.run_dir, out)
            figs = sorted((Path(o.run_dir) / "figures").glob("*.png"))
            fig_links = ", ".join(f"[{f.stem}]({rel}/figures/{f.name})" for f in figs) or "—"
            status = ("ok" if o.claims else "ok (no claims)") + (" (alone)" if o.alone else "")
            runs.append(
                [o.method, o.domain, o.seed, status, f"{o.seconds:.1f}", f"[report]({rel}/report.md)", fig_links]
            )
        elif o.skipped:
            runs.append([o.method, o.domain, o.seed, f"skipped: {o.skipped}", "—", "—", "—"])
        else:
            runs.append([o.method, o.domain, o.seed, f"**failed**: {o.error}", f"{o.seconds:.1f}", "—", "—"])
    lines.append(markdown_table(["method", "domain", "seed", "status", "time (s)", "report", "figures"], runs))
    failed = [o for o in outcomes if not o.ok and not o.skipped]
    if failed:
        lines += ["", f"{len(failed)} run(s) failed; the others' results above are complete."]
    lines += ["", "## Wall time per method", "", _wall_times(outcomes, plan, seconds)]
    lines.append("")
    atomic_write_json(
        out / "report.json",
        {
            **plan.to_dict(),
            "seconds": round(seconds, 2),
            "interval": f"paired Student-t, {CONFIDENCE:.0%}",
            "runs": [o.to_dict() for o in outcomes],
            "claims": [{"method": m, **s.to_dict()} for m, s in summaries],
        },
    )
    return atomic_write_text(out / "REPORT.md", "\n".join(lines))


# --------------------------------------------------------------------------------------------------
# schedulers
# --------------------------------------------------------------------------------------------------

Task = tuple[str, int]  # (method, seed)
Report = Callable[[RunOutcome], None]


def _flags(base: CommonFlags, seed: int) -> CommonFlags:
    return replace(base, seed=seed)


def _run_serial(
    specs: Mapping[str, MethodSpec[Any]],
    tasks: Sequence[Task],
    preset: str,
    base: CommonFlags,
    report: Report,
    *,
    alone: bool,
) -> None:
    for name, seed in tasks:
        print(f"[reproduce] {name} seed {seed} ({preset}) ...", file=sys.stderr, flush=True)
        report(run_one(specs[name], preset, _flags(base, seed), alone))


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def _pool_worker_init(threads: int) -> None:
    """Set up a spawned pool worker: ``threads`` intra-op threads (before it imports torch or numpy's BLAS),
    and SIGTERM raised like Ctrl-C, so a stopped run unwinds (its ``finally`` blocks stop the processes it
    started) and keeps its checkpoints."""
    import signal

    from iclr26_shared.cli import _on_sigterm

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    signal.signal(signal.SIGTERM, _on_sigterm)


def _stop_workers(pool: Any, *, grace_s: float = 60.0) -> None:
    """Ctrl-C or SIGTERM reached the reproduce: cancel the queued runs and stop the running ones.

    SIGTERM only reaches this process (Ctrl-C reaches the whole process group), and the executor's own
    shutdown would wait for every running run to finish: each worker is sent SIGTERM, given ``grace_s``
    to unwind, then killed.
    """
    procs = list(getattr(pool, "_processes", {}).values())  # the executor keeps its workers there
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + grace_s
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(5.0)


def _run_pool(
    specs: Mapping[str, MethodSpec[Any]],
    tasks: Sequence[Task],
    preset: str,
    base: CommonFlags,
    report: Report,
    *,
    jobs: int,
) -> None:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    threads = max(1, available_cpus() // jobs)
    ctx = mp.get_context("spawn")
    init = {"initializer": _pool_worker_init, "initargs": (threads,)}
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, **init) as pool:
        # specs travel by pickle: their run/claims functions are found by module and name
        futures = {pool.submit(run_one, specs[n], preset, _flags(base, s), False): (n, s) for n, s in tasks}
        try:
            for fut in as_completed(futures):
                n, s = futures[fut]
                try:
                    report(fut.result())
                except Exception as err:  # the worker process itself died
                    spec = specs[n]
                    report(RunOutcome(n, spec.domain, spec.paper, s, False, 0.0, error=f"worker died: {err}"))
        except BaseException:  # Ctrl-C / SIGTERM: finished rows are in REPORT.md, running runs keep checkpoints
            _stop_workers(pool)
            raise


def check_ray_address(address: str | None) -> None:
    """Fail fast, in one line, when ``HOST:PORT`` does not answer (Ray itself would retry for minutes)."""
    if address in (None, "auto", "local"):
        return
    assert address is not None
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--address {address!r}: expected auto or HOST:PORT (e.g. 10.0.0.1:6379)")
    try:
        with socket.create_connection((host, int(port)), timeout=3.0):
            pass
    except OSError as err:
        raise UsageError(f"--address {address}: no Ray head answers there ({err.strerror or err})") from None


class RayScheduler:
    """Runs tasks as Ray tasks (``ray.remote`` with each spec's CPUs/GPUs), gathering them as they finish."""

    def __init__(self, address: str | None, *, num_cpus: int | None = None) -> None:
        check_ray_address(address)
        # keep Ray's known FutureWarning about accelerator env vars out of the user's terminal
        os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
        import ray

        self.ray = ray
        self.started_here = not ray.is_initialized()
        kwargs: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False, "logging_level": logging.ERROR}
        t0 = time.monotonic()
        try:
            if address in (None, "local"):
                ray.init(num_cpus=num_cpus or os.cpu_count() or 1, **kwargs)
            else:
                ray.init(address=address, **kwargs)
        except ConnectionError as err:
            raise UsageError(f"--address {address}: cannot connect to a Ray cluster ({err})") from None
        self.startup_s = time.monotonic() - t0
        self.remote = ray.remote(max_retries=0)(run_one)
        self._node_cpus: float | None = None

    def gpus(self) -> float:
        """GPUs in the cluster."""
        return float(self.ray.cluster_resources().get("GPU", 0.0))

    def node_cpus(self) -> float:
        """CPUs of the largest alive node (an exclusive task asks for all of them); asked once per scheduler."""
        if self._node_cpus is None:
            cpus = [n["Resources"].get("CPU", 0.0) for n in self.ray.nodes() if n.get("Alive")]
            self._node_cpus = max(cpus or [1.0])
        return self._node_cpus

    def run(
        self,
        specs: Mapping[str, MethodSpec[Any]],
        tasks: Sequence[Task],
        preset: str,
        base: CommonFlags,
        report: Report,
        *,
        alone: bool,
    ) -> None:
        """Submit ``tasks`` (all at once; with ``alone``, one at a time holding a whole node)."""
        pending: dict[Any, Task] = {}

        def submit(name: str, seed: int) -> None:
            spec = specs[name]
            res = spec.resources
            cpus = self.node_cpus() if alone else res.cpus
            gpus = max(res.gpus, 1.0) if spec.needs_gpu(preset) else res.gpus
            task: Any = self.remote.options(num_cpus=cpus, num_gpus=gpus)
            ref = task.remote(spec, preset, _flags(base, seed), alone)
            pending[ref] = (name, seed)

        queue = list(tasks)
        if not alone:
            for n, s in queue:
                submit(n, s)
            queue = []
        elif queue:
            submit(*queue.pop(0))
        while pending:
            done, _ = self.ray.wait(list(pending), num_returns=1)
            n, s = pending.pop(done[0])
            try:
                report(self.ray.get(done[0]))
            except Exception as err:  # the worker died (RayTaskError, WorkerCrashedError, ...)
                spec = specs[n]
                msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                report(RunOutcome(n, spec.domain, spec.paper, s, False, 0.0, error=f"Ray task failed: {msg}"))
            if queue:
                submit(*queue.pop(0))

    def close(self) -> None:
        """Shut down the Ray this scheduler started (a cluster we connected to keeps running)."""
        if self.started_here:
            self.ray.shutdown()


def _local_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


# --------------------------------------------------------------------------------------------------
# reproduce
# --------------------------------------------------------------------------------------------------


def _read_back(
    specs: Mapping[str, MethodSpec[Any]], tasks: Sequence[Task], preset: str, out: Path, stored: Mapping[str, Any]
) -> dict[Task, RunOutcome]:
    """The (method, seed) runs of a resumed reproduce that already finished, read in this process.

    A run is finished when its newest run directory (the one ``--resume`` would continue, see
    :func:`~iclr26_shared.config.latest_run_dir`) has a ``results.json`` with its claims; its outcome keeps
    the claims it measured and the wall time the earlier reproduce stored for it.
    """
    seconds = {
        str(r.get("run_dir")): float(r.get("seconds") or 0.0)
        for r in stored.get("runs", [])
        if isinstance(r, dict) and r.get("ok")
    }
    done: dict[Task, RunOutcome] = {}
    for name, seed in tasks:
        spec = specs[name]
        path = latest_run_dir(out / name, spec.preset(preset), seed)
        if path is None or not (path / "results.json").is_file():
            continue
        results = read_json(path / "results.json", what="results", error=UsageError)
        if isinstance(results, dict) and isinstance(results.get("claims"), list):
            claims = [Claim.from_dict(c) for c in results["claims"]]
            dt = seconds.get(str(path), 0.0)
            done[(name, seed)] = RunOutcome(name, spec.domain, spec.paper, seed, True, dt, claims, str(path))
    return done


def _check_preset(specs: Mapping[str, MethodSpec[Any]], names: Sequence[str], preset: str) -> None:
    """``preset`` is one every method has (smoke, quick, full) or one every selected method defines."""
    if preset in PRESET_NAMES:
        return
    lacking = [n for n in names if n in specs and preset not in specs[n].presets]
    if not any(preset in s.presets for s in specs.values()):
        raise UsageError(f"unknown preset {preset!r} (choose from {', '.join(PRESET_NAMES)}, or one a method defines)")
    if lacking:
        having = [n for n, s in specs.items() if preset in s.presets]
        raise UsageError(
            f"preset {preset!r} is defined only by {', '.join(having)}, not by {', '.join(lacking)}: "
            f"select with --only {','.join(having)}"
        )


def _resume_plan(out: Path) -> dict[str, Any]:
    """The plan stored in ``out/report.json``, checked: a hand-edited or foreign file is one line."""
    from iclr26_shared.preflight import MAX_SEED

    where = out / "report.json"
    data = read_json(where, what="reproduce report to resume", error=UsageError)
    if not isinstance(data, dict) or not {"methods", "seeds", "preset"} <= set(data):
        raise UsageError(f"{where}: not a reproduce report (expected keys methods, seeds, preset)")
    methods, seeds = data["methods"], data["seeds"]
    if not (isinstance(methods, list) and methods and all(isinstance(m, str) and m for m in methods)):
        raise UsageError(f"{where}: 'methods' = {methods!r}: expected a non-empty list of method names")
    ok_seed = (
        [isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_SEED for x in seeds]
        if isinstance(seeds, list)
        else []
    )
    if not (ok_seed and all(ok_seed)):
        raise UsageError(f"{where}: 'seeds' = {seeds!r}: expected a non-empty list of integers in [0, {MAX_SEED}]")
    if not (isinstance(data["preset"], str) and data["preset"]):
        raise UsageError(
            f"{where}: 'preset' = {data['preset']!r}: expected a preset name such as {', '.join(PRESET_NAMES)}"
        )
    for key in ("device", "backend"):
        if key in data and not isinstance(data[key], str):
            raise UsageError(f"{where}: {key!r} = {data[key]!r}: expected a string")
    if not isinstance(data.get("runs", []), list):
        raise UsageError(f"{where}: 'runs' = {data['runs']!r}: expected a list")
    return data


def _check_resume_flags(
    stored: Mapping[str, Any],
    *,
    preset: str | None,
    only: Sequence[str] | None,
    seed: int | None,
    seeds: int | None,
    device: str | None,
) -> None:
    """``--resume`` runs the stored plan: a flag given with it must say the same, or it is one line."""
    where = "the stored plan"
    stored_seeds = [int(s) for s in stored["seeds"]]
    if preset is not None and preset != stored["preset"]:
        raise UsageError(f"--resume: --preset {preset} contradicts {where} (preset {stored['preset']}); drop it")
    if only is not None and sorted(set(only)) != sorted(set(stored["methods"])):
        raise UsageError(
            f"--resume: --only {','.join(only)} contradicts {where} (methods {','.join(stored['methods'])}); drop it"
        )
    first = stored_seeds[0] if seed is None else seed
    count = len(stored_seeds) if seeds is None else seeds
    if (seed is not None or seeds is not None) and [first + i for i in range(count)] != stored_seeds:
        given = " ".join(f for f, v in (("--seed", seed), ("--seeds", seeds)) if v is not None)
        raise UsageError(f"--resume: {given} contradicts {where} (seeds {', '.join(map(str, stored_seeds))}); drop it")
    if device is not None and device != stored.get("device", "auto"):
        raise UsageError(f"--resume: --device {device} contradicts {where} (device {stored.get('device')}); drop it")


def reproduce(
    specs: Mapping[str, MethodSpec[Any]],
    *,
    preset: str | None = None,
    only: Sequence[str] | None = None,
    out_dir: Path = Path("runs"),
    seed: int | None = None,
    seeds: int | None = None,
    device: str | None = None,
    jobs: int | None = 1,
    backend: str | None = None,
    address: str | None = None,
    resume: Path | None = None,
    quiet: bool = True,
) -> tuple[Path, list[RunOutcome]]:
    """Run the claim experiment of every spec (or of ``only``) for ``seeds`` seeds; see the module docs.

    Seeds are ``seed, seed + 1, ..., seed + seeds − 1`` (defaults: preset ``quick``, seed 0, one seed,
    device ``auto``). With ``resume`` (a reproduce directory) the plan stored there is run again: finished
    runs are read back, unfinished ones continue from checkpoints; a ``preset``, ``only``, ``seed``,
    ``seeds`` or ``device`` that contradicts the stored plan is a :class:`UsageError` (leave them None).
    ``backend`` defaults to ``"process"``, or to the resumed reproduce's backend. ``jobs=None`` is one
    process per available CPU (:func:`available_cpus`), at most one per run; ``1`` runs serially here.
    Each new reproduce gets its own folder ``reproduce-<UTC time>[-N]`` (created exclusively).
    """
    if only is not None:
        only = list(dict.fromkeys(str(n).strip() for n in only if str(n).strip()))
        if not only:
            raise UsageError("--only: names no method (expected comma-separated method names; see iclr26 list)")
    stored: dict[str, Any] | None = _resume_plan(Path(resume)) if resume is not None else None
    if stored is not None:
        _check_resume_flags(stored, preset=preset, only=only, seed=seed, seeds=seeds, device=device)
    preset = "quick" if preset is None else preset
    seed = 0 if seed is None else seed
    seeds = 1 if seeds is None else seeds
    device = "auto" if device is None else device
    if backend is None:
        backend = str(stored.get("backend", "process")) if stored is not None else "process"
        backend = backend if backend in BACKENDS else "process"
    if backend not in BACKENDS:
        raise UsageError(f"--backend {backend!r}: choose from {', '.join(BACKENDS)}")
    if seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {seeds}")
    from iclr26_shared.preflight import check_device_name, check_out_dir, check_seed

    check_seed(seed)
    check_seed(seed + seeds - 1, "--seed + --seeds - 1")
    check_device_name(device)
    check_out_dir(out_dir)
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {jobs}")
    if address is not None and backend != "ray":
        raise UsageError("--address needs --backend ray")
    if backend == "ray":
        from iclr26_shared.extras import require_extra

        require_extra("iclr26-shared", "ray", ["ray"], needed_by="iclr26 reproduce --backend ray")
    if resume is not None and stored is not None:
        out = Path(resume)
        names = [str(m) for m in stored["methods"]]
        seed_list = [int(s) for s in stored["seeds"]]
        preset = str(stored["preset"])
        device = str(stored.get("device", device))
        check_device_name(device)  # a stored cuda on a machine without one: refused before any run starts
    else:
        names = list(specs) if not only else list(only)
        seed_list = [seed + i for i in range(seeds)]
        out = Path(out_dir) / f"reproduce-{utc_stamp()}"
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise UsageError(f"unknown method(s) {', '.join(unknown)} (installed: {', '.join(specs) or 'none'})")
    _check_preset(specs, names, preset)
    if stored is None:
        out = unique_dir(out.parent, out.name)  # exclusive: a reproduce started in the same second gets -2
    plan = ReproducePlan(tuple(names), tuple(seed_list), preset, backend, device)
    base = CommonFlags(seed=seed_list[0], device=device, out_dir=out, quiet=quiet, resume=resume is not None)
    t0 = time.monotonic()
    finished: dict[Task, RunOutcome] = {}

    def report(outcome: RunOutcome) -> None:
        finished[(outcome.method, outcome.seed)] = outcome
        ordered = [finished[(n, s)] for n in names for s in seed_list if (n, s) in finished]
        write_reproduce_report(out, ordered, plan, seconds=time.monotonic() - t0)

    tasks = [(n, s) for n in names for s in seed_list]
    if stored is None:  # the plan is on disk before any run starts: a reproduce stopped early still resumes
        write_reproduce_report(out, [], plan, seconds=0.0)
    else:  # finished runs are read back here, never scheduled (nor queued behind others)
        for outcome in _read_back(specs, tasks, preset, out, stored).values():
            report(outcome)
        tasks = [t for t in tasks if t not in finished]
        if finished:
            print(f"[reproduce] --resume: {len(finished)} finished run(s) read back", file=sys.stderr, flush=True)
    ray_sched = RayScheduler(address) if backend == "ray" and tasks else None
    try:
        wants_gpu = any(specs[n].needs_gpu(preset) for n, _ in tasks)
        have_gpu = wants_gpu and (ray_sched.gpus() > 0 if ray_sched is not None else _local_gpu())
        runnable: list[Task] = []
        for n, s in tasks:
            if specs[n].needs_gpu(preset) and not have_gpu:
                spec = specs[n]
                where = "in the Ray cluster" if ray_sched is not None else "on this machine"
                report(RunOutcome(n, spec.domain, spec.paper, s, False, 0.0, skipped=f"needs a GPU; none {where}"))
            else:
                runnable.append((n, s))
        shared_tasks = [t for t in runnable if not specs[t[0]].resources.exclusive]
        if jobs is None:
            jobs = max(1, min(available_cpus(), len(shared_tasks)))
        alone_tasks = [t for t in runnable if specs[t[0]].resources.exclusive]
        if ray_sched is not None:
            print(f"[reproduce] Ray ready in {ray_sched.startup_s:.1f} s", file=sys.stderr, flush=True)
            ray_sched.run(specs, shared_tasks, preset, base, report, alone=False)
            ray_sched.run(specs, alone_tasks, preset, base, report, alone=True)
        elif jobs == 1:
            _run_serial(specs, shared_tasks + alone_tasks, preset, base, report, alone=True)
        else:
            _run_pool(specs, shared_tasks, preset, base, report, jobs=jobs)
            _run_serial(specs, alone_tasks, preset, base, report, alone=True)
    finally:
        if ray_sched is not None:
            ray_sched.close()
    ordered = [finished[(n, s)] for n in names for s in seed_list if (n, s) in finished]
    path = write_reproduce_report(out, ordered, plan, seconds=time.monotonic() - t0)
    return path, ordered
