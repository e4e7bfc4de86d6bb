"""Semantic Voting (*Semantic Voting: A Self-Evaluation-Free Approach for Efficient LLM Self-Improvement*,
ICLR 2026, arXiv 2509.23067): config, spec, policy builder, training and claims (public names imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_sequence_models.methods.semantic_voting.claims import claims, report
    from iclr26_sequence_models.methods.semantic_voting.config import (
        PRESETS,
        SemanticVotingConfig,
        SemanticVotingTrainConfig,
    )
    from iclr26_sequence_models.methods.semantic_voting.spec import SPEC
    from iclr26_sequence_models.methods.semantic_voting.train import run, semantic_voting, semantic_voting_pairs

_EXPORTS: dict[str, str] = {
    "semantic_voting_pairs": "iclr26_sequence_models.methods.semantic_voting.train",
    "semantic_voting": "iclr26_sequence_models.methods.semantic_voting.train",
    "SPEC": "iclr26_sequence_models.methods.semantic_voting.spec",
    "PRESETS": "iclr26_sequence_models.methods.semantic_voting.config",
    "SemanticVotingConfig": "iclr26_sequence_models.methods.semantic_voting.config",
    "SemanticVotingTrainConfig": "iclr26_sequence_models.methods.semantic_voting.config",
    "run": "iclr26_sequence_models.methods.semantic_voting.train",
    "claims": "iclr26_sequence_models.methods.semantic_voting.claims",
    "report": "iclr26_sequence_models.methods.semantic_voting.claims",
}

__all__ = [
    "PRESETS",
    "SPEC",
    "SemanticVotingConfig",
    "SemanticVotingTrainConfig",
    "claims",
    "report",
    "run",
    "semantic_voting",
    "semantic_voting_pairs",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
