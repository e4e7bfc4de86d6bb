"""Command line of the generative-vision domain: one subcommand per paper method.

``iclr26-generative-vision <method> --preset smoke|quick|full [--seed N] [--seeds N] [--device auto|cpu|cuda]``
``[--field value ...]``
"""

from __future__ import annotations

from typing import Any

from iclr26_generative_vision.methods.causal_delta.spec import SPEC as CAUSAL_DELTA
from iclr26_generative_vision.methods.dupa.spec import SPEC as DUPA
from iclr26_generative_vision.methods.elvis.spec import SPEC as ELVIS
from iclr26_generative_vision.methods.s2_guidance.spec import SPEC as S2_GUIDANCE
from iclr26_shared.cli import run_methods
from iclr26_shared.spec import MethodSpec

DOMAIN = "generative-vision"

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec[Any]] = {
    S2_GUIDANCE.name: S2_GUIDANCE,
    DUPA.name: DUPA,
    ELVIS.name: ELVIS,
    CAUSAL_DELTA.name: CAUSAL_DELTA,
}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-generative-vision``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-generative-vision", domain=DOMAIN)
