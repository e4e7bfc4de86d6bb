"""Build the ``SequenceModel`` of one run from resolved :class:`TaskSettings` and a position encoding."""

from __future__ import annotations

from typing import Any

from iclr26_sequence_models.methods.selective_rope.config import TaskSettings
from iclr26_sequence_models.nn.model import SequenceModel

__all__ = ["build_model"]


def build_model(s: TaskSettings, position: str, vocab_size: int, rope_theta: float = 500_000.0) -> SequenceModel:
    """The task's model with ``position`` (``nope | rope | selective``) in every mixer."""
    options: dict[str, Any] = {"rope_theta": rope_theta} if position == "rope" else {}
    if position == "selective":
        options = dict(s.selective)
    layer_options: dict[str, Any] = {}
    if s.layer == "gla":
        layer_options = {"expand_k": s.expand_k, "use_short_conv": s.use_short_conv}
    return SequenceModel(
        vocab_size=vocab_size,
        hidden_size=s.hidden_size,
        num_layers=s.num_layers,
        layer=s.layer,  # type: ignore[arg-type]
        num_heads=s.num_heads,
        position=position,
        position_options=options,
        layer_options=layer_options,
    )
