"""Shared fixture of the sequence-models CLI tests: one smoke run of a method into a temporary folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from iclr26_sequence_models import cli
from iclr26_shared.testing import assert_valid_run_dir, run_cli

SmokeRun = Callable[..., tuple[Path, dict[str, Any]]]


@pytest.fixture
def smoke_run(tmp_path: Path) -> SmokeRun:
    """``smoke_run(method, *flags)``: ``iclr26-sequence-models <method> --preset smoke --device cpu --quiet``
    into ``tmp_path``; asserts exit 0 and a valid run directory, returns ``(run_path, results)``."""

    def run(method: str, *flags: str) -> tuple[Path, dict[str, Any]]:
        args = [method, "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet", *flags]
        res = run_cli(cli.main, args)
        assert res.code == 0, res.err
        (run_path,) = (tmp_path / method).iterdir()
        return run_path, assert_valid_run_dir(run_path)

    return run
