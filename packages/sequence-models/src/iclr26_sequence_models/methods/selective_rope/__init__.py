"""Selective RoPE (Movahedi et al., *Selective Rotary Position Embedding*, ICLR 2026): config, spec,
model builder, tasks, training and claims (public names imported lazily, no torch at import)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_sequence_models.methods.selective_rope.claims import claims, report
    from iclr26_sequence_models.methods.selective_rope.config import PRESETS, SelectiveRopeConfig
    from iclr26_sequence_models.methods.selective_rope.spec import SPEC
    from iclr26_sequence_models.methods.selective_rope.train import run

_EXPORTS: dict[str, str] = {
    "SPEC": "spec",
    "PRESETS": "config",
    "SelectiveRopeConfig": "config",
    "run": "train",
    "claims": "claims",
    "report": "claims",
}

__all__ = ["PRESETS", "SPEC", "SelectiveRopeConfig", "claims", "report", "run"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
