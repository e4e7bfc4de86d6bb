"""The ``causal-delta`` method as the CLI and ``iclr26 reproduce`` see it."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

#: Causal Delta Embeddings (Alimisis & Diou, ICLR 2026, arXiv 2508.04492, OpenReview 5d7prMWHNF).
SPEC = MethodSpec.from_module(
    "iclr26_generative_vision.methods.causal_delta",
    name="causal-delta",
    paper="Learning Robust Intervention Representations with Delta Embeddings (ICLR 2026, arXiv 2508.04492)",
    summary="Causal delta embeddings δ = φ(x̃) − φ(x) (SupCon + L1) vs Causal Triplet pair classifiers on "
    "MuJoCo-rendered before/after action pairs, IID vs compositional/systematic OOD",
    gpu_presets=("full",),
)
