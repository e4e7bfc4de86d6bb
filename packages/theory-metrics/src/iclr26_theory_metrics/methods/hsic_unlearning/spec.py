"""The ``hsic-unlearning`` :class:`MethodSpec` (light: imports no torch until run)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_theory_metrics.methods.hsic_unlearning",
    name="hsic-unlearning",
    paper="Unlearning Evaluation through Subset Statistical Independence (Zhang, Li, Liu, Chen, Xu; ICLR 2026, "
    "arXiv 2603.00587)",
    summary="split-half HSIC tells in-training from unseen subsets; OTR of retrain vs unlearning methods and vs MIA",
)
