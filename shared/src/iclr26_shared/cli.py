"""The one place that knows tyro: domain CLIs built from ``MethodSpec``s.

``iclr26-<domain> <method> [--preset smoke|quick|full] [--seed N] [--device auto|cpu|cuda] [--out-dir D]
[--resume] [--quiet] [--<config-field> VALUE ...]``

The preset gives the defaults; any config field can then be overridden by its flag (derived from the
config dataclass, its types and field docstrings). Exit codes: 0 ok, 2 bad usage/config/input (one line
on stderr, no traceback), 1 internal failure (traceback).
"""

from __future__ import annotations

import dataclasses
import sys
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

import tyro

from iclr26_shared.errors import Iclr26Error, UsageError, did_you_mean
from iclr26_shared.runner import CommonFlags, execute, format_number
from iclr26_shared.spec import MethodSpec
from iclr26_shared.tyro_errors import one_line_parse_errors

__all__ = ["DEFAULT_PRESET", "SMOKE_NOTE", "Terminated", "main_guard", "parse_method_args", "preflight", "run_methods"]

#: The preset used when ``--preset`` is not given.
DEFAULT_PRESET = "quick"


def _pre_parse(spec: MethodSpec[Any], args: Sequence[str], prog: str) -> tuple[str, int, list[str]]:
    """``--preset`` and ``--seeds`` first (tyro, like every other flag): the preset decides the defaults
    that the method's own parser shows and fills in. Returns (preset, seeds, the other arguments)."""
    from typing import Literal

    from iclr26_shared.config import PosInt

    pre_cls = dataclasses.make_dataclass(
        "Pre",
        [
            ("preset", Literal[tuple(spec.presets)], dataclasses.field(default=DEFAULT_PRESET)),  # pyright: ignore[reportInvalidTypeForm]
            ("seeds", PosInt, dataclasses.field(default=1)),
        ],
        frozen=True,
    )
    helps = [a for a in args if a in ("-h", "--help")]
    with one_line_parse_errors(prog):
        pre, rest = tyro.cli(
            pre_cls, args=[a for a in args if a not in helps], prog=prog, return_unknown_args=True, add_help=False
        )
    if pre.seeds < 1:
        raise UsageError(f"{prog}: --seeds {pre.seeds}: expected a number of seeds >= 1")
    return pre.preset, pre.seeds, [*rest, *helps]


def parse_method_args(spec: MethodSpec[Any], args: Sequence[str], *, prog: str) -> tuple[Any, CommonFlags, str]:
    """Parse one method's arguments into ``(config, common flags, preset name)``.

    Raises :class:`UsageError` with one line for any bad value; ``SystemExit(0)`` after ``--help``.
    """
    preset_name, _, rest = _pre_parse(spec, args, prog)
    default_cfg = spec.preset(preset_name)
    args_cls = dataclasses.make_dataclass(
        f"{spec.config.__name__}Args",
        [
            ("config", spec.config, dataclasses.field(default=default_cfg)),
            ("common", CommonFlags, dataclasses.field(default=CommonFlags())),
        ],
        frozen=True,
    )
    description = (
        f"{spec.summary or spec.name}\n\nPaper: {spec.paper}\n\n"
        f"--preset {{{','.join(spec.presets)}}} chooses the defaults shown below (default: {DEFAULT_PRESET}; "
        f"shown: {preset_name}); any field can then be overridden. --seeds N runs seeds seed..seed+N-1 and "
        "combines each claim into a verdict with a 95% interval."
    )
    from iclr26_shared.help_bounds import bounds_registry

    with one_line_parse_errors(prog):
        parsed = tyro.cli(
            args_cls,
            registry=bounds_registry(),
            args=rest,
            prog=prog,
            description=description,
            default=args_cls(config=default_cfg, common=CommonFlags()),
            config=(tyro.conf.OmitArgPrefixes,),
        )
    return parsed.config, parsed.common, preset_name


def _overview(methods: Mapping[str, MethodSpec[Any]], prog: str, domain: str | None) -> str:
    lines = [f"usage: {prog} <method> [--preset smoke|quick|full] [--seed N] [--device auto|cpu|cuda] [...]", ""]
    if domain:
        lines += [f"iclr26 domain '{domain}'.", ""]
    if methods:
        lines.append("methods:")
        width = max(len(n) for n in methods)
        for name, spec in methods.items():
            lines.append(f"  {name:<{width}}  {spec.summary or spec.paper}")
        lines += ["", f"`{prog} <method> --help` lists the method's flags and presets."]
    else:
        lines.append("No methods are registered in this domain yet.")
    return "\n".join(lines)


class Terminated(KeyboardInterrupt):
    """SIGTERM (what ``timeout``, ``kill`` and job schedulers send), raised like Ctrl-C so a run stops the
    same way: its checkpoints stay, and ``--resume`` continues it."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def _quiet_broken_pipe() -> int:
    """``iclr26 list | head -1``: the reader left; stop writing without a traceback, as ``ls | head`` does."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (captured in tests)
        pass
    return 141  # 128 + SIGPIPE, the shell's code for a writer whose reader went away


def main_guard(fn: Any, *args: Any, **kwargs: Any) -> int:
    """Call ``fn`` and map errors to exit codes: user errors → 2 (one line), internal → 1 (traceback);
    Ctrl-C → 130 and SIGTERM → 143 (one line: the run can be resumed); a closed pipe on stdout → quiet."""
    import signal
    import threading

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        result = fn(*args, **kwargs)
        sys.stdout.flush()
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except Iclr26Error as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except Terminated:
        print("terminated (SIGTERM); rerun with --resume to continue from the last checkpoint", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("interrupted; rerun with --resume to continue from the last checkpoint", file=sys.stderr)
        return 130
    except SystemExit as exc:  # --help (tyro prints it, then exits 0)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            return _quiet_broken_pipe()
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as err:  # an internal failure: keep the traceback, it is a bug
        from iclr26_shared.preflight import environment_error

        machine = environment_error(err)
        if machine is not None:  # a full disk, a name too long, a read-only folder: the machine, not a bug
            print(f"error: {machine} (free space, or choose another --out-dir)", file=sys.stderr)
            return 2
        traceback.print_exc()
        print(f"internal error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return int(result or 0)


#: Printed with the verdicts of a smoke run.
SMOKE_NOTE = "(smoke preset: the pipeline runs end to end; its verdicts mean nothing, use --preset quick or full)"


def preflight(flags: CommonFlags, n_seeds: int = 1) -> None:
    """The common flags' checks that need no torch (seed range, device, output folder): bad values fail in
    a fraction of a second, before the method imports torch or builds its data."""
    from iclr26_shared.preflight import MAX_SEED, check_device_name, check_out_dir, check_seed

    check_seed(flags.seed)
    if flags.seed + n_seeds - 1 > MAX_SEED:
        check_seed(flags.seed + n_seeds - 1, "--seed + --seeds - 1")
    check_device_name(flags.device)
    if not flags.dry_run:
        check_out_dir(flags.out_dir)


def _run_one(spec: MethodSpec[Any], args: Sequence[str], prog: str) -> int:
    from iclr26_shared.preflight import reject_empty_paths

    reject_empty_paths(args, ("--out-dir",))
    _, n_seeds, _ = _pre_parse(spec, args, prog)
    cfg, flags, preset = parse_method_args(spec, args, prog=prog)
    preflight(flags, n_seeds)
    if spec.check_inputs is not None:  # opt-in data / files the config names: fail before torch is imported
        spec.check_inputs(cfg)
    if flags.dry_run:
        from iclr26_shared.dryrun import dry_run, format_dry_run

        print(format_dry_run(dry_run(spec, cfg, flags.device, seed=flags.seed)))
        return 0
    if n_seeds == 1:
        run, _, claims = execute(spec, cfg, flags, preset=preset)
        if not run.dist.is_main:  # under torchrun only rank 0 reports
            return 0
        print(f"run directory: {run.path}")
        if preset == "smoke":
            print(SMOKE_NOTE)
        for c in claims:
            ref = format_number(c.reference)
            print(f"  [{c.verdict}] {c.claim}: {c.metric} ours={format_number(c.ours)} ref={ref}")
        return 0
    return _run_seeds(spec, cfg, flags, preset, n_seeds)


def _run_seeds(spec: MethodSpec[Any], cfg: Any, flags: CommonFlags, preset: str, n_seeds: int) -> int:
    """``--seeds N``: N runs one after the other, then one aggregated REPORT.md (as ``iclr26 reproduce``)."""
    import time

    from iclr26_shared.io import unique_dir, utc_stamp
    from iclr26_shared.reproduce import ReproducePlan, RunOutcome, run_one, write_reproduce_report
    from iclr26_shared.verdicts import summarize_seeds

    out = unique_dir(flags.out_dir, f"{spec.name}-seeds-{utc_stamp()}")
    seeds = [flags.seed + i for i in range(n_seeds)]
    plan = ReproducePlan((spec.name,), tuple(seeds), preset, "serial", flags.device)
    outcomes: list[RunOutcome] = []
    t0 = time.monotonic()
    for seed in seeds:
        outcome = run_one(spec, preset, dataclasses.replace(flags, seed=seed), alone=True, config=cfg)
        outcomes.append(outcome)
        write_reproduce_report(out, outcomes, plan, seconds=time.monotonic() - t0)
        if outcome.error:
            print(f"seed {seed} failed; partial report: {out / 'REPORT.md'}", file=sys.stderr)
            return 2 if outcome.bad_input else 1
        print(f"seed {seed}: run directory {outcome.run_dir}")
    for s in summarize_seeds([(o.seed, o.claims) for o in outcomes]):
        ci = f"gain {format_number(s.gain_mean)} [{format_number(s.gain_low)}, {format_number(s.gain_high)}]"
        print(f"  [{s.verdict}] {s.claim}: {s.metric} {ci} over {s.n} seeds")
    print(f"report: {out / 'REPORT.md'}")
    return 0


def run_methods(
    methods: Mapping[str, MethodSpec[Any]] | Sequence[MethodSpec[Any]],
    argv: Sequence[str] | None = None,
    *,
    prog: str = "iclr26",
    domain: str | None = None,
) -> int:
    """Entry point of a domain CLI: pick the method subcommand, parse its flags, run it.

    Returns the exit code (0 ok, 1 internal failure, 2 bad usage/config/input).
    """
    if not isinstance(methods, Mapping):
        methods = {m.name: m for m in methods}
    for key, spec in methods.items():
        if key != spec.name:
            raise ValueError(f"METHODS key {key!r} differs from its spec name {spec.name!r}")
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        return main_guard(print, _overview(methods, prog, domain), file=sys.stdout if args else sys.stderr) or (
            0 if args else 2
        )
    name, rest = args[0], args[1:]
    if name not in methods:
        hint = did_you_mean(name, methods)
        known = ", ".join(methods) or "none registered"
        print(f"error: {prog}: unknown method {name!r} (known: {known}){hint}", file=sys.stderr)
        return 2
    return main_guard(_run_one, methods[name], rest, f"{prog} {name}")
