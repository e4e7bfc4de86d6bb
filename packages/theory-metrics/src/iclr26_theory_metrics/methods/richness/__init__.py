"""``richness``: the low-rank dynamical-richness metric D_LR across grokking and for lazy vs rich training (Nam et
al.: "Decoupling Dynamical Richness from Representation Learning: Towards Practical Measurement", ICLR 2026,
arXiv 2410.04264).

Public names are imported lazily (``SPEC``, ``RichnessConfig``, ``PRESETS``), so importing this package imports
no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["PRESETS", "SPEC", "RichnessConfig"]

_WHERE = {"PRESETS": "config", "RichnessConfig": "config", "SPEC": "spec"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
