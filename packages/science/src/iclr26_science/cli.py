"""Command line of the science domain: one subcommand per paper method.

``iclr26-science <method> --preset smoke|quick|full [--seed N] [--device auto|cpu|cuda] [--field value ...]``
"""

from __future__ import annotations

from iclr26_science.methods.brain_semantoks.spec import SPEC as BRAIN_SEMANTOKS
from iclr26_science.methods.cryolvm.spec import SPEC as CRYOLVM
from iclr26_science.methods.crystal_fourier_transformer.spec import SPEC as CRYSTAL_FOURIER_TRANSFORMER
from iclr26_science.methods.protein_ttt.spec import SPEC as PROTEIN_TTT
from iclr26_shared.cli import run_methods
from iclr26_shared.spec import MethodSpec

DOMAIN = "science"

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec] = {
    BRAIN_SEMANTOKS.name: BRAIN_SEMANTOKS,
    CRYOLVM.name: CRYOLVM,
    CRYSTAL_FOURIER_TRANSFORMER.name: CRYSTAL_FOURIER_TRANSFORMER,
    PROTEIN_TTT.name: PROTEIN_TTT,
}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-science``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-science", domain=DOMAIN)
