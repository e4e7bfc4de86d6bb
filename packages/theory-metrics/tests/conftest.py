"""Shared by the torchrun tests of the theory-metrics trainers: launch a method once as a single process and once
under ``torchrun`` (gloo, CPU), check that exactly one run directory was written, and compare the two
``metrics.jsonl`` curves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

Rows = list[dict[str, Any]]


class Launcher:
    """Runs ``python -m iclr26_theory_metrics <args>`` (one process) or under ``torchrun --standalone`` (a free
    rendezvous port, so parallel launches do not collide) with ``OMP_NUM_THREADS=1``, each into its own out-dir
    below ``root``."""

    def __init__(self, root: Path, torchrun: str) -> None:
        self.root, self.torchrun = root, torchrun
        self.env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def launch(self, args: Sequence[str], out: str, *, nproc: int = 1) -> Path:
        """Run the CLI with ``--out-dir root/out``; asserts exit code 0 and exactly one run directory of the
        method (rank 0 alone writes), which it returns."""
        prefix = [sys.executable] if nproc == 1 else [self.torchrun, "--standalone", "--nproc-per-node", str(nproc)]
        proc = subprocess.run(
            [*prefix, "-m", "iclr26_theory_metrics", *args, "--out-dir", str(self.root / out)],
            env=self.env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        (path,) = (self.root / out / args[0]).iterdir()  # exactly one run directory
        return path

    @staticmethod
    def rows(run_path: Path, keep: Callable[[dict[str, Any]], bool] = lambda r: True) -> Rows:
        """The rows of ``metrics.jsonl`` that ``keep`` accepts."""
        rows = [json.loads(line) for line in (run_path / "metrics.jsonl").read_text().splitlines()]
        return [r for r in rows if keep(r)]

    def one_vs_two(
        self, args: Sequence[str], keep: Callable[[dict[str, Any]], bool] = lambda r: True
    ) -> tuple[Rows, Rows]:
        """The kept rows of a single-process run and of a 2-process torchrun run of the same ``args``."""
        one = self.rows(self.launch(args, "one"), keep)
        two = self.rows(self.launch(args, "two", nproc=2), keep)
        return one, two

    @staticmethod
    def assert_close(a: Rows, b: Rows, keys: Sequence[str], tol: float = 1e-4) -> None:
        """Same number of rows and ``|a[key] − b[key]| < tol`` row by row for every key."""
        assert len(a) == len(b), (len(a), len(b))
        for key in keys:
            gap = max(abs(u[key] - v[key]) for u, v in zip(a, b, strict=True))
            assert gap < tol, (key, gap, a, b)


@pytest.fixture
def launcher(tmp_path: Path) -> Launcher:
    """A :class:`Launcher` writing below ``tmp_path`` (the test is skipped when ``torchrun`` is not on PATH)."""
    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not on PATH")
    return Launcher(tmp_path, torchrun)
