"""FGL: Forest-Based Graph Learning for Semi-Supervised Node Classification (Li et al., ICLR 2026).

Public names load lazily (PEP 562) so that importing the package imports no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_graphs.methods.fgl.config import PRESETS, FGLConfig
    from iclr26_graphs.methods.fgl.model import FGL, FGLStructure
    from iclr26_graphs.methods.fgl.preprocess import build_structure
    from iclr26_graphs.methods.fgl.spec import SPEC
    from iclr26_graphs.methods.fgl.train import fit

_EXPORTS: dict[str, str] = {
    "FGL": "iclr26_graphs.methods.fgl.model",
    "FGLStructure": "iclr26_graphs.methods.fgl.model",
    "FGLConfig": "iclr26_graphs.methods.fgl.config",
    "PRESETS": "iclr26_graphs.methods.fgl.config",
    "SPEC": "iclr26_graphs.methods.fgl.spec",
    "build_structure": "iclr26_graphs.methods.fgl.preprocess",
    "fit": "iclr26_graphs.methods.fgl.train",
}

__all__ = ["FGL", "PRESETS", "SPEC", "FGLConfig", "FGLStructure", "build_structure", "fit"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
