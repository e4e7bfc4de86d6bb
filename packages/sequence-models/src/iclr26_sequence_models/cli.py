"""Command line of the sequence-models domain: one subcommand per paper method.

``iclr26-sequence-models <method> --preset smoke|quick|full [--seed N] [--seeds N] [--device auto|cpu|cuda]
[--field value ...]``

Only light modules are imported here (no torch): ``iclr26 list`` imports every domain's CLI.
"""

from __future__ import annotations

from typing import Any

from iclr26_sequence_models.methods.restrain.spec import SPEC as RESTRAIN
from iclr26_sequence_models.methods.selective_rope.spec import SPEC
from iclr26_sequence_models.methods.semantic_voting.spec import SPEC as SEMANTIC_VOTING
from iclr26_shared.cli import run_methods
from iclr26_shared.spec import MethodSpec

DOMAIN = "sequence-models"

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec[Any]] = {
    SPEC.name: SPEC,
    RESTRAIN.name: RESTRAIN,
    SEMANTIC_VOTING.name: SEMANTIC_VOTING,
}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-sequence-models``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-sequence-models", domain=DOMAIN)
