"""A rich progress bar with ETA and the live metric, or plain log lines with ``quiet``."""

from __future__ import annotations

import sys
import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

__all__ = ["ProgressBar", "fit"]


def _fmt(metrics: dict[str, float | str]) -> str:
    return "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in metrics.items())


#: Columns the bar's fixed parts take besides the description and the metrics (bar 20, counts, times).
_FIXED_COLUMNS = 48


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis, so a bar line never wraps."""
    width = max(width, 0)
    return text if len(text) <= width else (text[: max(width - 1, 0)] + "…" if width else "")


class ProgressBar:
    """Context manager over ``total`` steps that shows ETA and the latest metrics.

    Usage::

        with ProgressBar(total=cfg.steps, description="fgl", quiet=run.quiet) as bar:
            for step in range(cfg.steps):
                ...
                bar.advance(loss=loss.item())

    With ``quiet=True`` (or when stderr is not a terminal) it prints at most ``log_every_s`` one log line
    with step, ETA and metrics instead of redrawing a bar. The bar keeps to the terminal's width (80
    columns included): the metrics are cut with an ellipsis rather than wrapped. A long unit of work
    (an epoch, a whole model fit) should advance the bar inside the unit, in steps, not only at its end.
    """

    def __init__(
        self,
        total: int,
        description: str = "",
        *,
        quiet: bool = False,
        completed: int = 0,
        log_every_s: float = 10.0,
        console: Console | None = None,
    ) -> None:
        self.total = int(total)
        self.completed = int(completed)
        self.description = description
        self.quiet = quiet or (console is None and not sys.stderr.isatty())
        self._console = console
        self.log_every_s = log_every_s
        self.metrics: dict[str, float | str] = {}
        self._progress: Progress | None = None
        self._task = None
        self._start = time.monotonic()
        self._start_completed = self.completed
        self._last_log = 0.0
        self._metrics_width = 80

    def __enter__(self) -> ProgressBar:
        if not self.quiet:
            console = self._console or Console(stderr=True)
            self._metrics_width = console.width - _FIXED_COLUMNS - len(self.description)
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(bar_width=20),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[metrics]}"),
                console=console,
                transient=False,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task(
                self.description, total=self.total, completed=self.completed, metrics=""
            )
        return self

    def eta_seconds(self) -> float | None:
        """Seconds left at the average rate of this session (None before the first step)."""
        done = self.completed - self._start_completed
        if done <= 0:
            return None
        rate = (time.monotonic() - self._start) / done
        return rate * max(self.total - self.completed, 0)

    def advance(self, n: int = 1, **metrics: float | str) -> None:
        """Count ``n`` finished steps and show ``metrics`` (the latest value of each; numbers or labels)."""
        self.completed += n
        self.metrics.update(metrics)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=n, metrics=fit(_fmt(self.metrics), self._metrics_width))
            return
        now = time.monotonic()
        if now - self._last_log >= self.log_every_s or self.completed >= self.total:
            self._last_log = now
            eta = self.eta_seconds()
            eta_s = "?" if eta is None else f"{eta:.0f}s"
            print(
                f"[{self.description}] {self.completed}/{self.total} eta {eta_s} {_fmt(self.metrics)}".rstrip(),
                file=sys.stderr,
                flush=True,
            )

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)
