"""Ego-Foresight (Serra Nunes et al., ICLR 2026, arXiv 2407.01570): agent-aware representations for DrQ-v2.

Public names load on first access (PEP 562), so importing this package imports no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

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

__getattr__, __dir__ = lazy_exports(__name__, {k: f"{__name__}.{v}" for k, v in _WHERE.items()}, __all__)
