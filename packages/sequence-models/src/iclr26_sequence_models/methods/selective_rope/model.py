"""Build the model of one run from resolved :class:`TaskSettings` and a position encoding: the
``transformers`` causal LM :class:`~iclr26_sequence_models.nn.hf.SelectiveRopeForCausalLM` (the experiment
trains through it; its ``.model`` is the :class:`~iclr26_sequence_models.nn.model.SequenceModel`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iclr26_sequence_models.methods.selective_rope.config import TaskSettings

if TYPE_CHECKING:
    from iclr26_sequence_models.nn.hf import SelectiveRopeForCausalLM, SelectiveRopeLMConfig

__all__ = ["build_model", "model_config"]

#: The experiment's position names → :class:`SelectiveRopeLMConfig`'s.
_HF_POSITION = {"nope": "none", "rope": "rope", "selective": "selective"}


def model_config(
    s: TaskSettings, position: str, vocab_size: int, rope_theta: float = 500_000.0
) -> SelectiveRopeLMConfig:
    """The :class:`SelectiveRopeLMConfig` of ``s`` with ``position`` (``nope | rope | selective``) in every
    mixer: RoPE gets ``rope_theta``, Selective RoPE the task's switches, GLA its ``expand_k`` and short conv."""
    from iclr26_sequence_models.nn.hf import SelectiveRopeLMConfig

    if position not in _HF_POSITION:
        raise ValueError(f"build_model: position {position!r}; expected one of {list(_HF_POSITION)}")
    options: dict[str, Any] = {"rope_theta": rope_theta} if position == "rope" else {}
    if position == "selective":
        options = dict(s.selective)
    layer_options: dict[str, Any] = {}
    if s.layer == "gla":
        layer_options = {"expand_k": s.expand_k, "use_short_conv": s.use_short_conv}
    return SelectiveRopeLMConfig(
        vocab_size=vocab_size,
        hidden_size=s.hidden_size,
        num_hidden_layers=s.num_layers,
        num_heads=s.num_heads,
        layer=s.layer,
        position=_HF_POSITION[position],
        position_options=options,
        layer_options=layer_options,
    )


def build_model(
    s: TaskSettings, position: str, vocab_size: int, rope_theta: float = 500_000.0
) -> SelectiveRopeForCausalLM:
    """The task's causal LM with ``position`` in every mixer (weights drawn from torch's global generator in
    the same order as a bare ``SequenceModel`` of the same sizes: equal seeds give equal weights)."""
    from iclr26_sequence_models.nn.hf import SelectiveRopeForCausalLM

    return SelectiveRopeForCausalLM(model_config(s, position, vocab_size, rope_theta))
