"""Ego-Foresight (Serra Nunes et al., ICLR 2026): agent-aware representations for DrQ-v2.

Importing this package is light (config and claims only); the training code lives in ``train`` and
``model`` and is imported when a run starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iclr26_rl.methods.ego_foresight.claims import claims, report
from iclr26_rl.methods.ego_foresight.config import AGENTS, PRESETS, EgoForesightConfig
from iclr26_shared.spec import MethodSpec

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

__all__ = ["AGENTS", "PRESETS", "SPEC", "EgoForesightConfig", "claims", "report"]


def _run(cfg: EgoForesightConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_rl.methods.ego_foresight.train import run as train_run

    return train_run(cfg, run)


SPEC: MethodSpec[EgoForesightConfig] = MethodSpec(
    name="ego-foresight",
    domain="rl",
    paper="Ego-Foresight: Self-supervised Learning of Agent-Aware Representations for Improved RL "
    "(Serra Nunes, Dehban, Demiris, Santos-Victor; ICLR 2026; arXiv 2407.01570)",
    config=EgoForesightConfig,
    presets=PRESETS,
    run=_run,
    claims=claims,
    summary="DrQ-v2 vs DrQ-v2 + Ego-Foresight (agent/scene split, action-conditioned future frames) "
    "on gymnasium MuJoCo tasks from pixels",
    report=report,
)
