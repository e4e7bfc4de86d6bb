"""Semantic Voting (*Semantic Voting: A Self-Evaluation-Free Approach for Efficient LLM Self-Improvement*,
ICLR 2026, arXiv 2509.23067): config, spec, policy builder, training and claims (public names imported lazily)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_sequence_models.methods.semantic_voting.claims import claims, report
    from iclr26_sequence_models.methods.semantic_voting.config import PRESETS, SemanticVotingConfig
    from iclr26_sequence_models.methods.semantic_voting.spec import SPEC
    from iclr26_sequence_models.methods.semantic_voting.train import run

_EXPORTS: dict[str, str] = {
    "SPEC": "spec",
    "PRESETS": "config",
    "SemanticVotingConfig": "config",
    "run": "train",
    "claims": "claims",
    "report": "claims",
}

__all__ = ["PRESETS", "SPEC", "SemanticVotingConfig", "claims", "report", "run"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
