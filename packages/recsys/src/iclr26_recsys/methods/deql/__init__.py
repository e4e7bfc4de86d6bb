"""DEQL: Generalizing Linear Autoencoder Recommenders with Decoupled Expected Quadratic Loss (ICLR 2026, 2603.07402)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names for type checkers; at run time they load on first access (no torch here)
    from iclr26_recsys.methods.deql.config import PRESETS, DEQLConfig
    from iclr26_recsys.methods.deql.spec import SPEC

__all__ = ["PRESETS", "SPEC", "DEQLConfig"]

_WHERE = {
    "DEQLConfig": "iclr26_recsys.methods.deql.config",
    "PRESETS": "iclr26_recsys.methods.deql.config",
    "SPEC": "iclr26_recsys.methods.deql.spec",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'iclr26_recsys.methods.deql' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
