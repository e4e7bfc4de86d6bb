"""The ``richness`` :class:`MethodSpec` (light: imports no torch until run)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_theory_metrics.methods.richness",
    name="richness",
    paper="Decoupling Dynamical Richness from Representation Learning: Towards Practical Measurement (Nam et al.; "
    "ICLR 2026, arXiv 2410.04264)",
    summary="D_LR = 1 − CKA(T, T_MP): falls across grokking; lazy (last layer only) vs rich training on images",
)
