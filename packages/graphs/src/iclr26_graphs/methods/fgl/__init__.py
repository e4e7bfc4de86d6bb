"""FGL: Forest-Based Graph Learning for Semi-Supervised Node Classification (Li et al., ICLR 2026).

Public names load lazily (PEP 562) so that importing the package imports no torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_graphs.methods.fgl.config import PRESETS, FGLConfig
    from iclr26_graphs.methods.fgl.model import FGL, FGLStructure
    from iclr26_graphs.methods.fgl.preprocess import build_structure
    from iclr26_graphs.methods.fgl.spec import SPEC

_EXPORTS: dict[str, str] = {
    "FGL": "iclr26_graphs.methods.fgl.model",
    "FGLStructure": "iclr26_graphs.methods.fgl.model",
    "FGLConfig": "iclr26_graphs.methods.fgl.config",
    "PRESETS": "iclr26_graphs.methods.fgl.config",
    "SPEC": "iclr26_graphs.methods.fgl.spec",
    "build_structure": "iclr26_graphs.methods.fgl.preprocess",
}

__all__ = ["FGL", "PRESETS", "SPEC", "FGLConfig", "FGLStructure", "build_structure"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'iclr26_graphs.methods.fgl' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
