"""Causal Delta Embeddings (Alimisis & Diou, ICLR 2026, arXiv 2508.04492): action representations δ = φ(x̃) − φ(x).

Public names are loaded lazily (no torch on import): ``CausalDeltaConfig``, ``PRESETS``, ``SPEC``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_generative_vision.methods.causal_delta.config import PRESETS, CausalDeltaConfig
    from iclr26_generative_vision.methods.causal_delta.spec import SPEC

_LAZY = {
    "CausalDeltaConfig": "iclr26_generative_vision.methods.causal_delta.config",
    "PRESETS": "iclr26_generative_vision.methods.causal_delta.config",
    "SPEC": "iclr26_generative_vision.methods.causal_delta.spec",
}

__all__ = ["PRESETS", "SPEC", "CausalDeltaConfig"]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
