"""S²-Guidance (Chen et al., arXiv 2508.12880, ICLR 2026): Eq. 4 / Alg. 1 as a diffusers guider, on toys and a DiT.

Public names are loaded lazily (no torch on import): ``S2GuidanceConfig``, ``PRESETS``, ``SPEC``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_generative_vision.methods.s2_guidance.config import PRESETS, S2GuidanceConfig
    from iclr26_generative_vision.methods.s2_guidance.spec import SPEC

_LAZY = {
    "S2GuidanceConfig": "iclr26_generative_vision.methods.s2_guidance.config",
    "PRESETS": "iclr26_generative_vision.methods.s2_guidance.config",
    "SPEC": "iclr26_generative_vision.methods.s2_guidance.spec",
}

__all__ = ["PRESETS", "SPEC", "S2GuidanceConfig"]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
