"""The umbrella command ``iclr26``: ``list``, ``run``, ``reproduce``, ``bench``.

Methods are discovered through the entry point group ``iclr26.methods`` (each installed domain package
exposes its ``cli.METHODS``), so the command works with any subset of domains installed.

``iclr26 reproduce`` runs every method's claim experiment with one preset, keeps going when a method
fails (and says so), and writes ``<out-dir>/reproduce-<UTC time>/REPORT.md`` (plus ``report.json``): one
row per claim with the paper's number, ours and whether it holds, and links to each method's report.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from iclr26_shared.cli import main_guard, run_methods
from iclr26_shared.errors import UsageError
from iclr26_shared.io import atomic_write_json, atomic_write_text
from iclr26_shared.runner import CommonFlags, claims_table, execute
from iclr26_shared.spec import PRESET_NAMES, Claim, MethodSpec

__all__ = ["ENTRY_POINT_GROUP", "MethodOutcome", "discover_methods", "main", "reproduce", "write_reproduce_report"]

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
# reproduce
# --------------------------------------------------------------------------------------------------


@dataclass
class MethodOutcome:
    """What one method's claim experiment gave."""

    method: str
    domain: str
    paper: str
    ok: bool
    seconds: float
    claims: list[Claim] = field(default_factory=list)
    run_dir: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "method": self.method,
            "domain": self.domain,
            "paper": self.paper,
            "ok": self.ok,
            "seconds": round(self.seconds, 2),
            "run_dir": self.run_dir,
            "error": self.error,
            "claims": [c.to_dict() for c in self.claims],
        }


def _reproduce_one(spec: MethodSpec[Any], preset: str, flags: CommonFlags) -> MethodOutcome:
    t0 = time.monotonic()
    try:
        run, _, claims = execute(spec, spec.preset(preset), flags, preset=preset)
    except Exception as err:
        detail = traceback.format_exc(limit=-3)
        print(f"[reproduce] {spec.name} FAILED: {type(err).__name__}: {err}\n{detail}", file=sys.stderr)
        return MethodOutcome(
            spec.name, spec.domain, spec.paper, False, time.monotonic() - t0, error=f"{type(err).__name__}: {err}"
        )
    return MethodOutcome(spec.name, spec.domain, spec.paper, True, time.monotonic() - t0, claims, str(run.path))


def write_reproduce_report(out: Path, outcomes: Sequence[MethodOutcome], *, preset: str, seconds: float) -> Path:
    """Write REPORT.md and report.json into ``out``; returns the REPORT.md path."""
    claims = [(o, c) for o in outcomes for c in o.claims]
    n_hold = sum(c.holds for _, c in claims)
    lines = [
        "# iclr26 reproduce report",
        "",
        f"Preset `{preset}` · {len(outcomes)} methods · {sum(o.ok for o in outcomes)} ran · "
        f"{n_hold}/{len(claims)} claims hold · {seconds:.0f} s · "
        f"{_dt.datetime.now(_dt.UTC).isoformat(timespec='seconds')}",
        "",
    ]
    if preset == "smoke":
        lines += ["The `smoke` preset only checks that every pipeline runs: its claim verdicts mean nothing.", ""]
    lines += ["## Claims", ""]
    if claims:
        table = claims_table([c for _, c in claims], method="")
        rows = table.splitlines()
        body = [row.replace("|  |", f"| {o.method} |", 1) for row, (o, _) in zip(rows[2:], claims, strict=True)]
        lines += [*rows[:2], *body]
    else:
        lines.append("No claims were measured.")
    lines += [
        "",
        "## Methods",
        "",
        "| method | domain | status | time (s) | report | figures |",
        "|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        if o.ok and o.run_dir:
            rel = os.path.relpath(o.run_dir, out)
            figs = sorted((Path(o.run_dir) / "figures").glob("*.png"))
            fig_links = ", ".join(f"[{f.stem}]({rel}/figures/{f.name})" for f in figs) or "—"
            status = "ok" if o.claims else "ok (no claims)"
            lines.append(
                f"| {o.method} | {o.domain} | {status} | {o.seconds:.1f} | [report]({rel}/report.md) | {fig_links} |"
            )
        else:
            lines.append(f"| {o.method} | {o.domain} | **failed**: {o.error} | {o.seconds:.1f} | — | — |")
    failed = [o for o in outcomes if not o.ok]
    if failed:
        lines += ["", f"{len(failed)} method(s) failed; the others' results above are complete."]
    lines.append("")
    atomic_write_json(
        out / "report.json",
        {"preset": preset, "seconds": round(seconds, 2), "methods": [o.to_dict() for o in outcomes]},
    )
    return atomic_write_text(out / "REPORT.md", "\n".join(lines))


def reproduce(
    specs: Mapping[str, MethodSpec[Any]],
    *,
    preset: str = "quick",
    only: Sequence[str] | None = None,
    out_dir: Path = Path("runs"),
    seed: int = 0,
    device: str = "auto",
    jobs: int = 1,
    quiet: bool = True,
) -> tuple[Path, list[MethodOutcome]]:
    """Run the claim experiment of every spec (or of ``only``) and write the report; see module docs."""
    if preset not in PRESET_NAMES:
        raise UsageError(f"unknown preset {preset!r} (choose from {', '.join(PRESET_NAMES)})")
    if jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {jobs}")
    names = list(specs) if not only else list(only)
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise UsageError(f"unknown method(s) {', '.join(unknown)} (installed: {', '.join(specs) or 'none'})")
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(out_dir) / f"reproduce-{stamp}"
    out.mkdir(parents=True, exist_ok=True)
    flags = CommonFlags(seed=seed, device=device, out_dir=out, quiet=quiet)
    t0 = time.monotonic()
    outcomes: list[MethodOutcome] = []
    if jobs == 1:
        for n in names:
            print(f"[reproduce] {n} ({preset}) ...", file=sys.stderr, flush=True)
            outcomes.append(_reproduce_one(specs[n], preset, flags))
            write_reproduce_report(out, outcomes, preset=preset, seconds=time.monotonic() - t0)
    else:
        import multiprocessing as mp

        with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
            # specs travel by pickle: their run/claims functions are module-level, found by reference
            futures = {pool.submit(_reproduce_one, specs[n], preset, flags): n for n in names}
            finished: dict[str, MethodOutcome] = {}
            for fut in as_completed(futures):
                n = futures[fut]
                try:
                    finished[n] = fut.result()
                except Exception as err:  # the worker itself died
                    s = specs[n]
                    finished[n] = MethodOutcome(n, s.domain, s.paper, False, 0.0, error=f"worker died: {err}")
                # the report grows as methods finish, so a killed reproduce keeps what was done
                outcomes = [finished[m] for m in names if m in finished]
                write_reproduce_report(out, outcomes, preset=preset, seconds=time.monotonic() - t0)
    report = write_reproduce_report(out, outcomes, preset=preset, seconds=time.monotonic() - t0)
    return report, outcomes


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
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
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
    def error(self, message: str) -> None:  # one line, exit 2
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
    rep.add_argument("--seed", type=int, default=0)
    rep.add_argument("--device", default="auto")
    rep.add_argument("--jobs", type=int, default=1, help="methods run in parallel processes")
    rep.add_argument("--verbose", action="store_true", help="progress bars instead of log lines")
    b = sub.add_parser("bench", help="run the packages' benchmark scripts (JSON ratios)")
    b.add_argument("--only", default="", help="comma-separated substrings of '<package>/<script>'")
    b.add_argument("--out-dir", type=Path, default=Path("runs"))
    b.add_argument("--root", type=Path, default=None, help="workspace root (default: found from cwd)")
    b.add_argument("--quick", action="store_true")
    return p


def _main(argv: list[str]) -> int:
    args = _build_parser().parse_args(argv)
    if args.command == "run":
        specs, _ = discover_methods()
        return run_methods(specs, args.method_args, prog="iclr26 run")
    specs, errors = discover_methods()
    for ep, msg in errors.items():
        print(f"warning: domain {ep!r} failed to load: {msg}", file=sys.stderr)
    if args.command == "list":
        if not specs:
            print("no methods installed (install a domain package, e.g. `uv sync`)")
        for name, s in sorted(specs.items(), key=lambda kv: (kv[1].domain, kv[0])):
            print(f"{s.domain:<18} {name:<24} presets: {','.join(s.presets):<18} {s.paper}")
        domains = sorted({ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)})
        print(f"domains installed: {', '.join(domains) or 'none'}")
        return 0
    if args.command == "reproduce":
        only = [s for s in args.only.split(",") if s] or None
        report, outcomes = reproduce(
            specs,
            preset=args.preset,
            only=only,
            out_dir=args.out_dir,
            seed=args.seed,
            device=args.device,
            jobs=args.jobs,
            quiet=not args.verbose,
        )
        failed = [o.method for o in outcomes if not o.ok]
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
