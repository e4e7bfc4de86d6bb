"""The umbrella command ``iclr26``: ``list``, ``run``, ``reproduce``, ``models``, ``bench``.

Methods are discovered through the entry point group ``iclr26.methods`` (each installed domain package
exposes its ``cli.METHODS``), so the command works with any subset of domains installed.

``iclr26 reproduce`` runs every method's claim experiment with one preset over one or more seeds, on a
local process pool or on Ray, keeps going when a run fails (and says so), and writes
``<out-dir>/reproduce-<UTC time>/REPORT.md`` (plus ``report.json``): one row per claim with the paper's
number, ours, the baseline, the paired gain with its 95% interval and the verdict (see
:mod:`iclr26_shared.reproduce`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

from iclr26_shared.cli import main_guard, run_methods
from iclr26_shared.errors import UsageError
from iclr26_shared.io import utc_stamp
from iclr26_shared.spec import PRESET_NAMES, MethodSpec

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
    root = root or find_workspace_root()
    if root is None:
        raise UsageError("cannot find the workspace (a folder with pyproject.toml and packages/); pass --root")
    scripts = sorted(root.glob("packages/*/benchmarks/*.py")) + sorted(root.glob("shared/benchmarks/*.py"))
    scripts = [s for s in scripts if not s.name.startswith("_")]
    if only:
        scripts = [s for s in scripts if any(o in f"{s.parent.parent.name}/{s.stem}" for o in only)]
    if not scripts:
        print("no benchmark scripts found", file=sys.stderr)
        return 0
    stamp = utc_stamp()
    out = Path(out_dir) / f"bench-{stamp}"
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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


def _build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="iclr26", description="iclr26: ICLR 2026 papers as tested software.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="installed methods, their domains and presets")
    r = sub.add_parser("run", help="run one method: iclr26 run <method> [method flags]", add_help=False)
    r.add_argument("method_args", nargs=argparse.REMAINDER)
    rep = sub.add_parser("reproduce", help="run every method's claim experiment and write REPORT.md")
    rep.add_argument("--preset", default="quick", choices=PRESET_NAMES)
    rep.add_argument("--only", default="", help="comma-separated method names")
    rep.add_argument("--out-dir", type=Path, default=Path("runs"))
    rep.add_argument("--seed", type=int, default=0, help="first seed")
    rep.add_argument("--seeds", type=int, default=1, help="seeds per method (seed, seed+1, ...); >= 2 gives intervals")
    rep.add_argument("--device", default="auto")
    rep.add_argument(
        "--backend",
        default=None,
        choices=("process", "ray"),
        help="local processes or Ray tasks (default: process; with --resume, the resumed reproduce's backend)",
    )
    rep.add_argument("--jobs", type=int, default=1, help="process backend: runs in parallel processes (1: serial)")
    rep.add_argument(
        "--address", default=None, help="ray backend: auto or HOST:PORT of a Ray head (default: local Ray)"
    )
    rep.add_argument("--resume", type=Path, default=None, metavar="DIR", help="continue the reproduce in DIR")
    rep.add_argument("--verbose", action="store_true", help="progress bars instead of log lines")
    m = sub.add_parser("models", help="the trained models a run saved (load them with iclr26_shared.load_model)")
    m.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    b = sub.add_parser("bench", help="run the packages' benchmark scripts (JSON ratios)")
    b.add_argument("--only", default="", help="comma-separated substrings of '<package>/<script>'")
    b.add_argument("--out-dir", type=Path, default=Path("runs"))
    b.add_argument("--root", type=Path, default=None, help="workspace root (default: found from cwd)")
    b.add_argument("--quick", action="store_true")
    return p


def _models(run_dir: Path) -> int:
    from iclr26_shared.models import list_models

    if not run_dir.is_dir():
        raise UsageError(f"iclr26 models: {run_dir}: no such run directory")
    models = list_models(run_dir)
    if not models:
        print(f"{run_dir}: the run saved no model")
        return 0
    width = max(len(n) for n in models)
    for name, meta in models.items():
        print(f"{name:<{width}}  {meta['bytes'] / 1e6:8.3f} MB  {meta['class']}")
    print(f"load one with: iclr26_shared.load_model({str(run_dir)!r}, name)")
    return 0


def _main(argv: list[str]) -> int:
    args = _build_parser().parse_args(argv)
    if args.command == "run":
        specs, _ = discover_methods()
        return run_methods(specs, args.method_args, prog="iclr26 run")
    if args.command == "models":
        return _models(args.run_dir)
    specs, errors = discover_methods()
    for ep, msg in errors.items():
        print(f"warning: domain {ep!r} failed to load: {msg}", file=sys.stderr)
    if args.command == "list":
        if not specs:
            print("no methods installed (install a domain package, e.g. `uv sync`)")
        width = max((len(n) for n in specs), default=0)
        for name, s in sorted(specs.items(), key=lambda kv: (kv[1].domain, kv[0])):
            print(f"{s.domain:<18} {name:<{width}}  presets: {','.join(s.presets):<18} {s.paper}")
        domains = sorted({ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)})
        print(f"domains installed: {', '.join(domains) or 'none'}")
        return 0
    if args.command == "reproduce":
        from iclr26_shared.reproduce import reproduce

        only = [s for s in args.only.split(",") if s] or None
        report, outcomes = reproduce(
            specs,
            preset=args.preset,
            only=only,
            out_dir=args.out_dir,
            seed=args.seed,
            seeds=args.seeds,
            device=args.device,
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
    if args.command == "bench":
        only = [s for s in args.only.split(",") if s] or None
        return 1 if bench(args.root, only=only, out_dir=args.out_dir, quick=args.quick) else 0
    raise AssertionError(args.command)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``iclr26``; returns the exit code."""
    return main_guard(_main, list(sys.argv[1:] if argv is None else argv))
