"""ELViS (Suma et al., ICLR 2026): efficient visual similarity from local descriptors (re-ranking).

Public names are loaded lazily (no torch on import): ``ELViSConfig``, ``PRESETS``, ``SPEC``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_generative_vision.methods.elvis.config import PRESETS, ELViSConfig
    from iclr26_generative_vision.methods.elvis.spec import SPEC

_LAZY = {
    "ELViSConfig": "iclr26_generative_vision.methods.elvis.config",
    "PRESETS": "iclr26_generative_vision.methods.elvis.config",
    "SPEC": "iclr26_generative_vision.methods.elvis.spec",
}

__all__ = ["PRESETS", "SPEC", "ELViSConfig"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
