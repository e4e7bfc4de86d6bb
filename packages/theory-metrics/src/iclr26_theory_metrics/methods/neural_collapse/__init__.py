"""``neural-collapse``: NC0–NC4 under SGD, SGDW, Adam, AdamW, Signum and SignumW (Zhao, Cheng, Masarczyk, Lucchi:
"Optimizer Choice Matters for the Emergence of Neural Collapse", ICLR 2026, arXiv 2602.16642).

Public names are imported lazily (``SPEC``, ``NeuralCollapseConfig``, ``PRESETS``), so importing this package
imports no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["PRESETS", "SPEC", "NeuralCollapseConfig"]

_WHERE = {"PRESETS": "config", "NeuralCollapseConfig": "config", "SPEC": "spec"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
