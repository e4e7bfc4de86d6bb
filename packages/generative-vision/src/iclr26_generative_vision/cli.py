"""Command line of the generative-vision domain: one subcommand per paper method.

``iclr26-generative-vision <method> --preset smoke|quick|full [--seed N] [--device auto|cpu|cuda] [--field value ...]``
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iclr26_generative_vision.methods.s2_guidance.config import PRESETS as S2_PRESETS
from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig
from iclr26_shared.cli import run_methods
from iclr26_shared.runs import RunDir
from iclr26_shared.spec import Claim, MethodSpec

DOMAIN = "generative-vision"


def _s2_run(cfg: S2GuidanceConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_generative_vision.methods.s2_guidance.train import run as s2_run

    return s2_run(cfg, run)


def _s2_claims(results: Mapping[str, Any]) -> list[Claim]:
    from iclr26_generative_vision.methods.s2_guidance.claims import s2_claims

    return s2_claims(results)


def _s2_report(results: Mapping[str, Any]) -> str:
    from iclr26_generative_vision.methods.s2_guidance.train import report

    return report(results)


S2_GUIDANCE: MethodSpec[S2GuidanceConfig] = MethodSpec(
    name="s2-guidance",
    domain=DOMAIN,
    paper="S²-Guidance: Stochastic Self-Guidance for Training-Free Enhancement of Diffusion Models (arXiv 2508.12880)",
    config=S2GuidanceConfig,
    presets=S2_PRESETS,
    run=_s2_run,
    claims=_s2_claims,
    summary="S²-Guidance as a diffusers guider: Gaussian-mixture toys (exact + MLP) and a class-conditional DiT",
    report=_s2_report,
)

#: The paper methods of this domain, by CLI name (also the entry point ``iclr26.methods``).
METHODS: dict[str, MethodSpec] = {S2_GUIDANCE.name: S2_GUIDANCE}


def main(argv: list[str] | None = None) -> int:
    """Run ``iclr26-generative-vision``; returns the process exit code (0 ok, 1 internal failure, 2 bad input)."""
    return run_methods(METHODS, argv, prog="iclr26-generative-vision", domain=DOMAIN)
