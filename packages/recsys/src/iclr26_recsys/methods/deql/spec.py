"""The ``deql`` :class:`~iclr26_shared.spec.MethodSpec` (light: imports no torch until a run starts)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_recsys.methods.deql",
    name="deql",
    paper="Generalizing Linear Autoencoder Recommenders with Decoupled Expected Quadratic Loss (arXiv 2603.07402)",
    summary="EASE vs EDLAE (b = 0) vs DEQL (b > 0) closed forms on MovieLens-100K, strong generalisation",
)
