"""ELViS (Suma et al., ICLR 2026): efficient visual similarity from local descriptors (re-ranking).

Public names are loaded lazily (no torch on import): ``ELViSConfig``, ``PRESETS``, ``SPEC``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_generative_vision.methods.elvis.config import PRESETS, ELViSConfig
    from iclr26_generative_vision.methods.elvis.spec import SPEC

_LAZY = {
    "ELViSConfig": "iclr26_generative_vision.methods.elvis.config",
    "PRESETS": "iclr26_generative_vision.methods.elvis.config",
    "SPEC": "iclr26_generative_vision.methods.elvis.spec",
}

__all__ = ["PRESETS", "SPEC", "ELViSConfig"]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
