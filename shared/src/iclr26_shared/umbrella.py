"""The umbrella command ``iclr26``: ``list``, ``run``, ``reproduce``, ``models``, ``bench``, ``data``.

Methods are discovered through the entry point group ``iclr26.methods`` (each installed domain package
exposes its ``cli.METHODS``), so the command works with any subset of domains installed.

``iclr26 reproduce`` runs every method's claim experiment with one preset over one or more seeds, on a
local process pool or on Ray, keeps going when a run fails (and says so), and writes
``<out-dir>/reproduce-<UTC time>/REPORT.md`` (plus ``report.json``): one row per claim with the paper's
number, ours, the baseline, the paired gain with its 95% interval and the verdict (see
:mod:`iclr26_shared.reproduce`).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, Literal

import tyro

from iclr26_shared.cli import main_guard, run_methods
from iclr26_shared.errors import UsageError, did_you_mean
from iclr26_shared.io import unique_dir, utc_stamp
from iclr26_shared.spec import MethodSpec
from iclr26_shared.tyro_errors import one_line_parse_errors

__all__ = ["ENTRY_POINT_GROUP", "discover_methods", "main"]

ENTRY_POINT_GROUP = "iclr26.methods"


def discover_methods() -> tuple[dict[str, MethodSpec[Any]], dict[str, str]]:
    """Load every installed domain's METHODS; returns (specs by name, load errors by entry point)."""
    specs: dict[str, MethodSpec[Any]] = {}
    errors: dict[str, str] = {}
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            methods = ep.load()
        except Exception as err:  # a broken domain must not hide the others
            errors[ep.name] = f"{type(err).__name__}: {err}"
            continue
        for name, spec in dict(methods).items():
            if name in specs:
                errors[ep.name] = f"method {name!r} is also registered by domain {specs[name].domain!r}"
                continue
            specs[name] = spec
    return specs, errors


# --------------------------------------------------------------------------------------------------
# bench
# --------------------------------------------------------------------------------------------------


def find_workspace_root(start: Path | None = None) -> Path | None:
    """The nearest directory above ``start`` (default: cwd) holding ``packages/`` and ``pyproject.toml``."""
    here = (start or Path.cwd()).resolve()
    for d in [here, *here.parents]:
        if (d / "pyproject.toml").is_file() and (d / "packages").is_dir():
            return d
    return None


def bench(root: Path | None, *, only: Sequence[str] | None, out_dir: Path, quick: bool) -> int:
    """Run every ``packages/*/benchmarks/*.py`` (and ``shared/benchmarks``) script; returns failures."""
    if root is not None and not (root.is_dir() and (root / "packages").is_dir()):
        raise UsageError(f"iclr26 bench --root {root}: not the workspace (expected a folder holding packages/)")
    root = root or find_workspace_root()
    if root is None:
        raise UsageError("cannot find the workspace (a folder with pyproject.toml and packages/); pass --root")
    found = sorted(root.glob("packages/*/benchmarks/*.py")) + sorted(root.glob("shared/benchmarks/*.py"))
    found = [s for s in found if not s.name.startswith("_")]
    scripts = found
    if only:
        scripts = [s for s in found if any(o in f"{s.parent.parent.name}/{s.stem}" for o in only)]
    if not scripts:
        names = ", ".join(f"{s.parent.parent.name}/{s.stem}" for s in found) or "none"
        what = f"no benchmark script matches --only {','.join(only)}" if only else f"no benchmark scripts under {root}"
        raise UsageError(f"iclr26 bench: {what} (found: {names})")
    from iclr26_shared.preflight import check_out_dir

    check_out_dir(out_dir)
    out = unique_dir(out_dir, f"bench-{utc_stamp()}")
    failures = 0
    for s in scripts:
        dest = out / f"{s.parent.parent.name}-{s.stem}.json"
        cmd = [sys.executable, str(s), "--out", str(dest), *(["--quick"] if quick else [])]
        print(f"[bench] {s.relative_to(root)}", file=sys.stderr, flush=True)
        if subprocess.run(cmd, check=False).returncode != 0:
            failures += 1
            print(f"[bench] {s.relative_to(root)} FAILED", file=sys.stderr)
    print(f"benchmark JSON in {out}")
    return failures


# --------------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ListCmd:
    """Installed methods, their domains and presets."""


@dataclasses.dataclass(frozen=True)
class RunCmd:
    """Run one method: iclr26 run METHOD [method flags] (the method's flags: iclr26 run METHOD --help)."""

    method: tyro.conf.Positional[Annotated[str, tyro.conf.arg(metavar="METHOD")]]
    """The method's name (iclr26 list)."""


@dataclasses.dataclass(frozen=True)
class ReproduceCmd:
    """Run every method's claim experiment and write REPORT.md."""

    preset: Annotated[str, tyro.conf.arg(metavar="{smoke,quick,full,...}")] = "quick"
    """The preset every method runs with: smoke, quick or full, or a preset every selected method defines
    (e.g. long for selective-rope: --preset long --only selective-rope); with --resume: the stored one."""
    only: str = ""
    """Comma-separated method names (default: every installed method; with --resume: the stored ones)."""
    out_dir: Path = Path("runs")
    """Where reproduce-<UTC time>/ is written."""
    seed: int = 0
    """First seed (with --resume: the stored one)."""
    seeds: int = 1
    """Seeds per method (seed, seed+1, ...); >= 2 gives intervals (with --resume: the stored ones)."""
    device: str = "auto"
    """auto, cpu, cuda or cuda:N (with --resume: the stored one)."""
    backend: Literal["process", "ray"] | None = None
    """Local processes or Ray tasks (default: process; with --resume, the resumed reproduce's backend)."""
    jobs: int | None = None
    """Process backend: runs in parallel processes (default: one per CPU, each with CPUs/jobs threads; 1: serial)."""
    address: str | None = None
    """Ray backend: auto or HOST:PORT of a Ray head (default: local Ray)."""
    resume: Path | None = None
    """Continue the reproduce in this folder."""
    verbose: bool = False
    """Progress bars instead of log lines."""


@dataclasses.dataclass(frozen=True)
class ModelsCmd:
    """The trained models a run saved (load them with iclr26_shared.load_model)."""

    run_dir: tyro.conf.Positional[Annotated[Path, tyro.conf.arg(metavar="RUN_DIR")]]
    """A run's folder (<out-dir>/<method>/<run>)."""


@dataclasses.dataclass(frozen=True)
class BenchCmd:
    """Run the packages' benchmark scripts (JSON ratios)."""

    only: str = ""
    """Comma-separated substrings of '<package>/<script>'."""
    out_dir: Path = Path("runs")
    """Where bench-<UTC time>/ is written."""
    root: Path | None = None
    """Workspace root (default: found from the current folder)."""
    quick: bool = False
    """The scripts' quick sizes."""


@dataclasses.dataclass(frozen=True)
class DataCmd:
    """The pinned data/model wheels the installed domains read, and whether they are in the data cache."""

    fetch: bool = False
    """Fetch every one that is not cached yet (needs the package index once; offline afterwards)."""
    only: str = ""
    """Comma-separated distribution names (e.g. recbole,antiberty)."""


_COMMANDS: dict[str, type] = {
    "list": ListCmd,
    "run": RunCmd,
    "reproduce": ReproduceCmd,
    "models": ModelsCmd,
    "bench": BenchCmd,
    "data": DataCmd,
}


def _parse(argv: list[str]) -> Any:
    """The umbrella's command line, parsed by tyro (one-line errors: :mod:`iclr26_shared.tyro_errors`)."""
    if argv and not argv[0].startswith("-") and argv[0] not in _COMMANDS:
        hint = did_you_mean(argv[0], _COMMANDS)
        raise UsageError(
            f"iclr26: invalid choice {argv[0]!r} for the command (expected one of {', '.join(_COMMANDS)}){hint}"
        )
    with one_line_parse_errors("iclr26"):
        return tyro.extras.subcommand_cli_from_dict(
            _COMMANDS, prog="iclr26", description="iclr26: ICLR 2026 papers as tested software.", args=argv
        )


def _models(run_dir: Path) -> int:
    """List a run's saved models; a folder that is not a run directory is one line, exit 2."""
    from iclr26_shared.models import MODELS_DIR, allowed_modules, list_models, model_problem

    try:
        is_dir = run_dir.is_dir()
    except OSError as err:
        raise UsageError(f"iclr26 models: {run_dir}: {err.strerror or err}") from None
    if not is_dir:
        raise UsageError(f"iclr26 models: {run_dir}: no such run directory")
    models = list_models(run_dir)
    if not models:
        if (run_dir / "config.json").is_file():  # a run directory whose method saved no model
            print(f"{run_dir}: the run saved no model")
            return 0
        what = (
            "no saved model in its models/ folder" if (run_dir / MODELS_DIR).is_dir() else "no config.json or models/"
        )
        raise UsageError(f"iclr26 models: {run_dir}: not a run directory ({what}); pass <out-dir>/<method>/<run>")
    width = max(len(n) for n in models)
    broken: dict[str, str] = {}
    for name, meta in models.items():
        problem = model_problem(meta)
        if problem is not None:
            broken[name] = problem
        trust = "" if str(meta["class"]).split(".")[0].split(":")[0] in allowed_modules() else "  (needs trust_class=)"
        mark = "  (cannot be loaded)" if problem else trust
        print(f"{name:<{width}}  {meta['bytes'] / 1e6:8.3f} MB  {meta['class']}{mark}")
    print(f"load one with: iclr26_shared.load_model({str(run_dir)!r}, name)")
    if broken:  # corrupted folders: one line, exit 2 (the first problem named)
        name, problem = next(iter(broken.items()))
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise UsageError(f"iclr26 models: model {name!r} cannot be loaded{more}: {problem}")
    return 0


def _data(args: DataCmd) -> int:
    from iclr26_shared.wheeldata import fetch_wheel, installed_wheels, is_cached

    wheels, errors = installed_wheels()
    for ep, msg in errors.items():
        print(f"warning: domain {ep!r} failed to list its data wheels: {msg}", file=sys.stderr)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = only - {w.name for w in wheels.values()}
    if unknown:
        known = ", ".join(sorted({w.name for w in wheels.values()})) or "none"
        raise UsageError(f"iclr26 data --only: unknown {', '.join(sorted(unknown))} (installed: {known})")
    chosen = [w for w in wheels.values() if not only or w.name in only]
    for w in sorted(chosen, key=lambda w: w.filename):
        if args.fetch and not is_cached(w):
            print(f"fetching {w.filename} ({w.size / 1e6:.1f} MB) ...", flush=True)
            fetch_wheel(w)
        state = "cached" if is_cached(w) else "not cached"
        print(f"{w.filename:<42} {w.size / 1e6:7.1f} MB  {state:<10}  {w.what}")
    if not chosen:
        print("the installed domains read no pinned wheels")
    return 0


def _main(argv: list[str]) -> int:
    if argv[:1] == ["run"] and argv[1:2] not in (["-h"], ["--help"], []):
        specs, _ = discover_methods()  # the method's own flags are the method's parser's (tyro) to read
        return run_methods(specs, argv[1:], prog="iclr26 run")
    from iclr26_shared.preflight import reject_empty_paths

    reject_empty_paths(argv)
    if argv[:1] == ["models"] and any(not a.strip() for a in argv[1:]):
        raise UsageError("iclr26 models '': expected a run directory (<out-dir>/<method>/<run>)")
    args = _parse(argv)
    if isinstance(args, RunCmd):  # unreachable: run is dispatched above (kept for the type checker)
        raise AssertionError(args)
    if isinstance(args, ModelsCmd):
        return _models(args.run_dir)
    if isinstance(args, DataCmd):
        return _data(args)
    specs, errors = discover_methods()
    for ep, msg in errors.items():
        print(f"warning: domain {ep!r} failed to load: {msg}", file=sys.stderr)
    if isinstance(args, ListCmd):
        if not specs:
            print("no methods installed (install a domain package, e.g. `uv sync`)")
        width = max((len(n) for n in specs), default=0)
        for name, s in sorted(specs.items(), key=lambda kv: (kv[1].domain, kv[0])):
            print(f"{s.domain:<18} {name:<{width}}  presets: {','.join(s.presets):<18} {s.paper}")
        domains = sorted({ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)})
        print(f"domains installed: {', '.join(domains) or 'none'}")
        return 0
    if isinstance(args, ReproduceCmd):
        from iclr26_shared.reproduce import reproduce

        def given(flag: str) -> bool:  # flags the user typed (None: take the default, or the stored plan)
            return any(a == flag or a.startswith(f"{flag}=") for a in argv)

        only = [s for s in args.only.split(",") if s.strip()] if given("--only") else None
        if only == []:
            raise UsageError(f"iclr26 reproduce: --only {args.only!r}: names no method (see iclr26 list)")
        report, outcomes = reproduce(
            specs,
            preset=args.preset if given("--preset") else None,
            only=only,
            out_dir=args.out_dir,
            seed=args.seed if given("--seed") else None,
            seeds=args.seeds if given("--seeds") else None,
            device=args.device if given("--device") else None,
            jobs=args.jobs,
            backend=args.backend,
            address=args.address,
            resume=args.resume,
            quiet=not args.verbose,
        )
        failed = sorted({f"{o.method} (seed {o.seed})" for o in outcomes if not o.ok and not o.skipped})
        print(f"report: {report}")
        if failed:
            print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1 if failed else 0
    if isinstance(args, BenchCmd):
        only = [s for s in args.only.split(",") if s.strip()] or None
        if args.only and not only:
            raise UsageError(f"iclr26 bench: --only {args.only!r}: names no script")
        return 1 if bench(args.root, only=only, out_dir=args.out_dir, quick=args.quick) else 0
    raise AssertionError(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``iclr26``; returns the exit code."""
    return main_guard(_main, list(sys.argv[1:] if argv is None else argv))
