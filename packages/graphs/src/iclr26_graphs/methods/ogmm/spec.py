"""The ``ogmm`` :class:`MethodSpec` (light: the run, claims and report load on first call)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_graphs.methods.ogmm",
    name="ogmm",
    paper="Out-of-Distribution Graph Models Merging (ICLR 2026, arXiv 2506.03674, OpenReview 93Y7jSUSpk)",
    summary="OGMM: data-free merging of GNN experts (expert inversion + noisy top-k MoE with head masks) vs "
    "single experts, ensembles, soups and data-free KD on a density-shifted target",
)
