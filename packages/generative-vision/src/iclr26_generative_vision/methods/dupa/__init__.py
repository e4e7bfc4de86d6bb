"""DUPA (Peng et al., ICLR 2026): dual-path condition alignment on a decoupled diffusion transformer (DDT).

Public names are loaded lazily (no torch on import): ``DUPAConfig``, ``PRESETS``, ``SPEC``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_generative_vision.methods.dupa.config import PRESETS, DUPAConfig
    from iclr26_generative_vision.methods.dupa.spec import SPEC

_LAZY = {
    "DUPAConfig": "iclr26_generative_vision.methods.dupa.config",
    "PRESETS": "iclr26_generative_vision.methods.dupa.config",
    "SPEC": "iclr26_generative_vision.methods.dupa.spec",
}

__all__ = ["PRESETS", "SPEC", "DUPAConfig"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
