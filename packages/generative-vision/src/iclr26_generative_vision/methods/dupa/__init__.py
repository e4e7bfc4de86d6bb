"""DUPA (Peng et al., ICLR 2026): dual-path condition alignment on a decoupled diffusion transformer (DDT).

Public names are loaded lazily (no torch on import): ``DUPAConfig``, ``DUPAObjective``, ``PRESETS``, ``SPEC``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_generative_vision.methods.dupa.config import PRESETS, DUPAConfig
    from iclr26_generative_vision.methods.dupa.model import DUPAObjective
    from iclr26_generative_vision.methods.dupa.spec import SPEC

_LAZY = {
    "DUPAConfig": "iclr26_generative_vision.methods.dupa.config",
    "PRESETS": "iclr26_generative_vision.methods.dupa.config",
    "DUPAObjective": "iclr26_generative_vision.methods.dupa.model",
    "SPEC": "iclr26_generative_vision.methods.dupa.spec",
}

__all__ = ["PRESETS", "SPEC", "DUPAConfig", "DUPAObjective"]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
