"""The ``restrain`` :class:`MethodSpec` (light: imports no torch until a run starts)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_sequence_models.methods.restrain",
    name="restrain",
    paper="RESTRAIN: From Spurious Votes to Signals — Self-Training RL with Self-Penalization "
    "(Yu, Su, Tao, ..., Weston, Yu, Xu; ICLR 2026; arXiv 2510.02172)",
    summary="Label-free GRPO: RESTRAIN vs TTRL, its ablations and gold-label GRPO on reasoning-gym arithmetic.",
    gpu_presets=("full",),
)
