"""Command line of the rl domain: one subcommand per paper method.

``iclr26-rl <method> --preset smoke|quick|full [--seed N] [--seeds N] [--device auto|cpu|cuda] [--field value ...]``
"""

from __future__ import annotations

from typing import Any

from iclr26_rl.methods.ego_foresight.spec import SPEC as EGO_FORESIGHT
from iclr26_shared.cli import run_methods
from iclr26_shared.spec import MethodSpec

DOMAIN = "rl"

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec[Any]] = {EGO_FORESIGHT.name: EGO_FORESIGHT}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-rl``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-rl", domain=DOMAIN)
