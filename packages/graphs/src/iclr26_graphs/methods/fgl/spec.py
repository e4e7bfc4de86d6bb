"""The ``fgl`` :class:`MethodSpec` (light: the run, claims and report load on first call)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_graphs.methods.fgl",
    name="fgl",
    paper="Forest-Based Graph Learning for Semi-Supervised Node Classification (ICLR 2026, OpenReview 5asbtzIVpS)",
    summary="FGL: homophily-guided spanning forests + linear-time tree aggregation vs GCN/APPNP/GCNII (cSBM sweep)",
)
