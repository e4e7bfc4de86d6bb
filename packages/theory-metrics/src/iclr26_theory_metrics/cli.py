"""Command line of the theory-metrics domain: one subcommand per paper method.

``iclr26-theory-metrics <method> --preset smoke|quick|full [--seed N] [--device auto|cpu|cuda] [--field value ...]``
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iclr26_shared.cli import run_methods
from iclr26_shared.runs import RunDir
from iclr26_shared.spec import Claim, MethodSpec
from iclr26_theory_metrics.methods.neural_collapse.config import PRESETS, NeuralCollapseConfig

DOMAIN = "theory-metrics"


def _nc_run(cfg: NeuralCollapseConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_theory_metrics.methods.neural_collapse.train import run as nc_run

    return nc_run(cfg, run)


def _nc_claims(results: Mapping[str, Any]) -> list[Claim]:
    from iclr26_theory_metrics.methods.neural_collapse.claims import claims

    return claims(results)


def _nc_report(results: Mapping[str, Any]) -> str:
    from iclr26_theory_metrics.methods.neural_collapse.report import report

    return report(results)


NEURAL_COLLAPSE: MethodSpec[NeuralCollapseConfig] = MethodSpec(
    name="neural-collapse",
    domain=DOMAIN,
    paper="Optimizer Choice Matters for the Emergence of Neural Collapse (Zhao, Cheng, Masarczyk, Lucchi; "
    "ICLR 2026, arXiv 2602.16642)",
    config=NeuralCollapseConfig,
    presets=PRESETS,
    run=_nc_run,
    claims=_nc_claims,
    summary="NC0–NC4 under SGD/SGDW/Adam/AdamW/Signum/SignumW: UFM theorems and real training runs",
    report=_nc_report,
)

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec] = {NEURAL_COLLAPSE.name: NEURAL_COLLAPSE}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-theory-metrics``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-theory-metrics", domain=DOMAIN)
