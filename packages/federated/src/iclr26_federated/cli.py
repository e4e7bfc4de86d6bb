"""Command line of the federated domain: one subcommand per paper method.

``iclr26-federated <method> --preset smoke|quick|full [--seed N] [--device auto|cpu|cuda] [--field value ...]``
"""

from __future__ import annotations

from typing import Any

from iclr26_federated.methods.fedopenmatch.spec import SPEC as FEDOPENMATCH
from iclr26_shared.cli import run_methods
from iclr26_shared.spec import MethodSpec

DOMAIN = "federated"

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec[Any]] = {FEDOPENMATCH.name: FEDOPENMATCH}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-federated``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-federated", domain=DOMAIN)
