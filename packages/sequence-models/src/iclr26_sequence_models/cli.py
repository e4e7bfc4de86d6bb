"""Command line of the sequence-models domain: one subcommand per paper method.

``iclr26-sequence-models <method> --preset smoke|quick|full [--seed N] [--device auto|cpu|cuda] [--field value ...]``

Only light modules are imported here (no torch): ``iclr26 list`` imports every domain's CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from iclr26_sequence_models.methods.selective_rope.config import PRESETS, SelectiveRopeConfig
from iclr26_shared.cli import run_methods
from iclr26_shared.spec import Claim, MethodSpec

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

DOMAIN = "sequence-models"


def _run_selective_rope(cfg: SelectiveRopeConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_sequence_models.methods.selective_rope.train import run as train_run

    return train_run(cfg, run)


def _claims(results: Mapping[str, Any]) -> list[Claim]:
    from iclr26_sequence_models.methods.selective_rope.claims import claims

    return claims(results)


def _report(results: Mapping[str, Any]) -> str:
    from iclr26_sequence_models.methods.selective_rope.claims import report

    return report(results)


SELECTIVE_ROPE = MethodSpec(
    name="selective-rope",
    domain=DOMAIN,
    paper="Selective Rotary Position Embedding (Movahedi, Carstensen, Afzal, Hutter, Orvieto, Cevher; ICLR 2026)",
    config=SelectiveRopeConfig,
    presets=PRESETS,
    run=_run_selective_rope,
    claims=_claims,
    summary="Selective RoPE vs RoPE vs NoPE in GLA/GDN/attention/FoX: state tracking, copying, MQAR, Bible bytes.",
    report=_report,
)

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec[Any]] = {SELECTIVE_ROPE.name: SELECTIVE_ROPE}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-sequence-models``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-sequence-models", domain=DOMAIN)
