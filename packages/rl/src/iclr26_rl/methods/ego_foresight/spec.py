"""The ``ego-foresight`` :class:`MethodSpec` (light: config now, training code on first call)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_rl.methods.ego_foresight",
    name="ego-foresight",
    paper="Ego-Foresight: Self-supervised Learning of Agent-Aware Representations for Improved RL "
    "(Serra Nunes, Dehban, Demiris, Santos-Victor; ICLR 2026; arXiv 2407.01570)",
    summary="DrQ-v2 vs DrQ-v2 + Ego-Foresight (agent/scene split, action-conditioned future frames) "
    "on gymnasium MuJoCo tasks from pixels",
    gpu_presets=("full",),
)
