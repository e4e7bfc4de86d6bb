"""Execute a method: run directory, ``spec.run``, claims, results.json and report.md.

Both the domain CLIs and ``iclr26 run|reproduce`` call :func:`execute`, so every run directory has the
same shape whichever entry point made it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iclr26_shared.config import config_to_dict
from iclr26_shared.errors import Iclr26Error
from iclr26_shared.spec import Claim, MethodSpec

if TYPE_CHECKING:  # runs/device/seeding import torch: loaded only when a method runs
    from iclr26_shared.runs import RunDir

__all__ = ["CommonFlags", "claims_table", "execute", "format_number", "method_report", "verdict_cell"]


@dataclass(frozen=True)
class CommonFlags:
    """Flags every method takes."""

    seed: int = 0
    """Random seed, 0 <= seed <= 2**32 - 1 (Python, NumPy and torch are seeded with it)."""
    device: str = "auto"
    """Device: auto (CUDA when available), cpu, cuda or cuda:N."""
    out_dir: Path = Path("runs")
    """Root of the run directories: <out-dir>/<method>/<UTC time>-<hash>/."""
    resume: bool = False
    """Continue the newest unfinished run with the same config and seed from its last checkpoint."""
    quiet: bool = False
    """Plain log lines instead of progress bars."""
    dry_run: bool = False
    """Build the preset (a few data items, the model and optimizer at full size), take one train and one eval
    step at batch 2, print the parameter count and peak memory, and exit; writes no run directory."""


def format_number(value: float | None) -> str:
    """Compact number for tables ("—" for None/NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or float(value).is_integer() and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.4g}"


def verdict_cell(verdict: str) -> str:
    """Markdown for a verdict: holds plain, fails bold, inconclusive italic."""
    return {"holds": "holds", "fails": "**fails**"}.get(verdict, f"_{verdict}_")


def _timing_label(c: Claim) -> str:
    if not c.timing:
        return ""
    return " (timing; other processes shared the CPUs: not judged)" if c.loaded else " (timing)"


def claims_table(claims: Sequence[Claim], *, method: str | None = None) -> str:
    """Markdown table of one run's claims (with a method column when ``method`` is given)."""
    from iclr26_shared.tables import markdown_table

    head = ["claim", "metric", "paper", "ours", "reference", "verdict (single run)"]
    if method is not None:
        head = ["method", *head]
    rows = []
    for c in claims:
        ref = format_number(c.reference)
        ref = ref if c.baseline is not None or c.threshold is None else f"threshold {ref}"
        better = " (higher is better)" if c.better == "higher" else " (lower is better)"
        row = [c.claim + _timing_label(c), c.metric + better, c.paper or "—", format_number(c.ours)]
        row += [ref, verdict_cell(c.verdict)]
        rows.append([method, *row] if method is not None else row)
    return markdown_table(head, rows)


def machine_line(machine: Any) -> str:
    """One line on the CPUs a run had (``results["machine"]``, from :func:`~iclr26_shared.bench.cpu_share`):
    its wall and CPU seconds and, when other processes used more than
    :data:`~iclr26_shared.bench.LOADED_FRACTION` of the CPUs, that its wall times were measured under load."""
    if not isinstance(machine, Mapping) or not isinstance(machine.get("wall_s"), (int, float)):
        return ""
    line = f"Machine: {machine.get('cpus', '?')} CPUs; the run took {machine['wall_s']:.1f} s wall"
    if isinstance(machine.get("own_cpu_s"), (int, float)):
        line += f", {machine['own_cpu_s']:.1f} CPU-s"
    foreign = machine.get("foreign_cpu_fraction")
    if isinstance(foreign, (int, float)):
        line += f"; other processes used {100 * foreign:.0f}% of the CPUs"
    if machine.get("loaded"):
        line += " (its wall times were measured under load: reported, not judged)"
    return line + "."


def method_report(spec: MethodSpec[Any], run: RunDir, results: Mapping[str, Any], claims: Sequence[Claim]) -> str:
    """The report.md of one run: header, config, claims, the method's own body, figures."""
    parts = [
        f"# {spec.name}",
        "",
        f"Paper: {spec.paper}  ",
        f"Domain: {spec.domain} · preset: {run.preset or 'custom'} · seed: {run.seed} · device: {run.device}",
        "",
    ]
    if spec.summary:
        parts += [spec.summary, ""]
    machine = machine_line(results.get("machine"))
    if machine:
        parts += [machine, ""]
    parts += ["## Claims", ""]
    parts += [claims_table(claims) if claims else "This method defines no claims yet.", ""]
    if spec.report is not None:
        parts += [spec.report(results).rstrip(), ""]
    figures = sorted((run.path / "figures").glob("*.png")) if (run.path / "figures").is_dir() else []
    if figures:
        parts += ["## Figures", ""]
        parts += [f"![{f.stem}](figures/{f.name})" for f in figures]
        parts.append("")
    parts += [
        "## Config",
        "",
        "```json",
        json.dumps(config_to_dict(run.config), indent=2),
        "```",
        "",
    ]
    return "\n".join(parts)


def execute(
    spec: MethodSpec[Any],
    cfg: Any,
    flags: CommonFlags,
    *,
    preset: str | None = None,
    shares_cpus: bool = False,
) -> tuple[RunDir, dict[str, Any], list[Claim]]:
    """Run ``spec`` with ``cfg`` and write the complete run directory; returns (run, results, claims).

    With ``flags.resume`` a finished run with the same config and seed is not run again: its results are
    read back. User errors raise :class:`~iclr26_shared.errors.Iclr26Error` subclasses.

    A timing claim is marked ``loaded`` (reported, not judged) when other processes used more than
    :data:`~iclr26_shared.bench.LOADED_FRACTION` of the CPUs during the run, or when the caller knows it
    scheduled other runs beside this one (``shares_cpus``, e.g. ``iclr26 reproduce``'s parallel pool).
    The mark is stored in results.json, so a resumed run reads it back.
    """
    from iclr26_shared.bench import cpu_share
    from iclr26_shared.device import resolve_device
    from iclr26_shared.distributed import get_context
    from iclr26_shared.runs import RunDir
    from iclr26_shared.seeding import seed_everything

    dist = get_context(flags.device)  # world size 1 unless launched by torchrun
    device = resolve_device(flags.device)
    seed_everything(flags.seed)
    run = RunDir.create(
        flags.out_dir,
        spec.name,
        cfg,
        seed=flags.seed,
        device=device,
        resume=flags.resume,
        quiet=flags.quiet or not dist.is_main,
        preset=preset,
        dist=dist,
    )
    try:  # the run directory's lock is released however the run ends
        done = run.read_results() if run.resumed else None
        if done is not None and isinstance(done.get("claims"), list):
            # A finished run: keep the claims it measured (results.json stores NaN as null, so they are not
            # re-evaluated from the read-back values).
            results = {k: v for k, v in done.items() if k != "claims"}
            claims = [Claim.from_dict(c) for c in done["claims"]]
        else:
            try:
                with cpu_share() as share:
                    results = spec.run(cfg, run)
            except Iclr26Error:  # bad input (data file, config): no half-written run directory stays behind
                run.discard_if_unused()
                raise
            if not isinstance(results, dict):
                raise TypeError(f"{spec.name}: run() must return a dict, got {type(results).__name__}")
            results = {**results, "machine": share.to_dict()}
            claims = spec.check_claims(results)
            if share.loaded or shares_cpus:  # wall-time claims of a run that shared the CPUs: reported, not judged
                claims = [dataclasses.replace(c, loaded=True) if c.timing else c for c in claims]
        results = {**results, "claims": [c.to_dict() for c in claims]}
        run.write_results(results)
        run.write_report(method_report(spec, run, results, claims))
    finally:
        run.close()
    return run, results, claims
