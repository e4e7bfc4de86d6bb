"""RESTRAIN (Yu et al., *RESTRAIN: From Spurious Votes to Signals — Self-Training RL with Self-Penalization*,
ICLR 2026): config, spec, policy builder, training and claims (public names imported lazily)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_sequence_models.methods.restrain.claims import claims, report
    from iclr26_sequence_models.methods.restrain.config import PRESETS, RestrainConfig
    from iclr26_sequence_models.methods.restrain.spec import SPEC
    from iclr26_sequence_models.methods.restrain.train import run

_EXPORTS: dict[str, str] = {
    "SPEC": "spec",
    "PRESETS": "config",
    "RestrainConfig": "config",
    "run": "train",
    "claims": "claims",
    "report": "claims",
}

__all__ = ["PRESETS", "SPEC", "RestrainConfig", "claims", "report", "run"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
