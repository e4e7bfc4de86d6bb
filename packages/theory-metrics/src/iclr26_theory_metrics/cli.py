"""Command line of the theory-metrics domain: one subcommand per paper method.

``iclr26-theory-metrics <method> --preset smoke|quick|full [--seed N] [--device auto|cpu|cuda] [--field value ...]``
"""

from __future__ import annotations

from iclr26_shared.cli import run_methods
from iclr26_shared.spec import MethodSpec
from iclr26_theory_metrics.methods.hsic_unlearning.spec import SPEC as HSIC_UNLEARNING
from iclr26_theory_metrics.methods.neural_collapse.spec import SPEC as NEURAL_COLLAPSE
from iclr26_theory_metrics.methods.richness.spec import SPEC as RICHNESS

DOMAIN = "theory-metrics"

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec] = {
    HSIC_UNLEARNING.name: HSIC_UNLEARNING,
    NEURAL_COLLAPSE.name: NEURAL_COLLAPSE,
    RICHNESS.name: RICHNESS,
}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-theory-metrics``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-theory-metrics", domain=DOMAIN)
