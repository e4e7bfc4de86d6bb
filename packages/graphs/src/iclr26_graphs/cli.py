"""Command line of the graphs domain: one subcommand per paper method.

``iclr26-graphs <method> --preset smoke|quick|full [--seed N] [--device auto|cpu|cuda] [--field value ...]``
"""

from __future__ import annotations

from iclr26_graphs.methods.fgl.spec import SPEC as FGL
from iclr26_graphs.methods.ogmm.spec import SPEC as OGMM
from iclr26_shared.cli import run_methods
from iclr26_shared.spec import MethodSpec

DOMAIN = "graphs"

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec] = {FGL.name: FGL, OGMM.name: OGMM}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-graphs``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-graphs", domain=DOMAIN)
