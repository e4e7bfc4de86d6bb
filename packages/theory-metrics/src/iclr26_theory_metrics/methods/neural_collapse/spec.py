"""The ``neural-collapse`` :class:`MethodSpec` (light: imports no torch until run)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_theory_metrics.methods.neural_collapse",
    name="neural-collapse",
    paper="Optimizer Choice Matters for the Emergence of Neural Collapse (Zhao, Cheng, Masarczyk, Lucchi; "
    "ICLR 2026, arXiv 2602.16642)",
    summary="NC0–NC4 under SGD/SGDW/Adam/AdamW/Signum/SignumW: UFM theorems and real training runs",
)
