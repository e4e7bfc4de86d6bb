"""S²-Guidance (Chen et al., arXiv 2508.12880, ICLR 2026): Eq. 4 / Alg. 1 as a diffusers guider, on toys and a DiT.

Public names are loaded lazily (no torch on import): ``S2GuidanceConfig``, ``PRESETS``, ``SPEC``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_generative_vision.methods.s2_guidance.config import PRESETS, S2GuidanceConfig
    from iclr26_generative_vision.methods.s2_guidance.spec import SPEC

_LAZY = {
    "S2GuidanceConfig": "iclr26_generative_vision.methods.s2_guidance.config",
    "PRESETS": "iclr26_generative_vision.methods.s2_guidance.config",
    "SPEC": "iclr26_generative_vision.methods.s2_guidance.spec",
}

__all__ = ["PRESETS", "SPEC", "S2GuidanceConfig"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
