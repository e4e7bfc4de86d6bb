"""Command line of the recsys domain: one subcommand per paper method.

``iclr26-recsys <method> --preset smoke|quick|full [--seed N] [--device auto|cpu|cuda] [--field value ...]``
"""

from __future__ import annotations

from iclr26_recsys.methods.deql.spec import SPEC as DEQL_SPEC
from iclr26_shared.cli import run_methods
from iclr26_shared.spec import MethodSpec

DOMAIN = "recsys"

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec] = {DEQL_SPEC.name: DEQL_SPEC}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-recsys``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-recsys", domain=DOMAIN)
