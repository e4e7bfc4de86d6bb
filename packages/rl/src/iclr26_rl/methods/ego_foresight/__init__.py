"""Ego-Foresight (Serra Nunes et al., ICLR 2026, arXiv 2407.01570): agent-aware representations for DrQ-v2.

Public names load on first access (PEP 562), so importing this package imports no torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_rl.methods.ego_foresight.claims import claims, report
    from iclr26_rl.methods.ego_foresight.config import AGENTS, PRESETS, EgoForesightConfig
    from iclr26_rl.methods.ego_foresight.spec import SPEC

_WHERE = {
    "AGENTS": "config",
    "PRESETS": "config",
    "EgoForesightConfig": "config",
    "SPEC": "spec",
    "claims": "claims",
    "report": "claims",
}

__all__ = ["AGENTS", "PRESETS", "SPEC", "EgoForesightConfig", "claims", "report"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
