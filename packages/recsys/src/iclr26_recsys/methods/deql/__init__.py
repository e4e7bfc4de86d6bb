"""DEQL: Generalizing Linear Autoencoder Recommenders with Decoupled Expected Quadratic Loss (ICLR 2026, 2603.07402)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:  # the names for type checkers; at run time they load on first access (no torch here)
    from iclr26_recsys.methods.deql.config import PRESETS, DEQLConfig
    from iclr26_recsys.methods.deql.spec import SPEC

__all__ = ["PRESETS", "SPEC", "DEQLConfig"]

_WHERE = {
    "DEQLConfig": "iclr26_recsys.methods.deql.config",
    "PRESETS": "iclr26_recsys.methods.deql.config",
    "SPEC": "iclr26_recsys.methods.deql.spec",
}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
