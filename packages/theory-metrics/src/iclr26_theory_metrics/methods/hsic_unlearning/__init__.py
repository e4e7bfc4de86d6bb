"""``hsic-unlearning``: unlearning evaluation by split-half statistical dependence (HSIC) of subsets (Zhang, Li, Liu,
Chen, Xu: "Unlearning Evaluation through Subset Statistical Independence", ICLR 2026, arXiv 2603.00587).

Public names are imported lazily (``SPEC``, ``HsicUnlearningConfig``, ``PRESETS``), so importing this package
imports no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["PRESETS", "SPEC", "HsicUnlearningConfig"]

_WHERE = {"PRESETS": "config", "HsicUnlearningConfig": "config", "SPEC": "spec"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
