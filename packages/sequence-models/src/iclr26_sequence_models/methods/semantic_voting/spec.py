"""The ``semantic-voting`` :class:`MethodSpec` (light: imports no torch until a run starts)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_sequence_models.methods.semantic_voting",
    name="semantic-voting",
    paper="Semantic Voting: A Self-Evaluation-Free Approach for Efficient LLM Self-Improvement on Unverifiable "
    "Open-ended Tasks (ICLR 2026; arXiv 2509.23067)",
    summary="Sentence-embedding votes (MiniLM + HDBSCAN) build DPO pairs without labels; vs self-judging, "
    "entropy minimisation and flipped pairs.",
)
