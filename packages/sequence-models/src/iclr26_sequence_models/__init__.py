"""iclr26 sequence-models: Selective RoPE (ICLR 2026) with its host layers, ops, tasks and data.

Public API (imported lazily, so ``import iclr26_sequence_models`` stays light)::

    from iclr26_sequence_models import naive_recurrent_gla, chunk_gla, SelectiveRoPE

* ops: :func:`naive_recurrent_gla`, :func:`chunk_gla`, :func:`naive_recurrent_gated_delta_rule`,
  :func:`chunk_gated_delta_rule` (fla layout ``[B, T, H, D]``, pure PyTorch);
* layers: :class:`SelectiveRoPE`, :class:`RoPE`, :class:`NoPE`, :class:`GatedLinearAttention`,
  :class:`GatedDeltaNet`, :class:`Attention`, :class:`ForgettingAttention`, :class:`ShortConvolution`;
* model: :class:`SequenceModel`; as a transformers model :class:`SelectiveRopeForCausalLM` /
  :class:`SelectiveRopeLMConfig` (registered with ``AutoModelForCausalLM``);
* data: :func:`multiquery_ar`, :func:`word_problem`, :func:`make_group`, :func:`load_bible`, copying batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_sequence_models.data.bible import load_bible
    from iclr26_sequence_models.data.copying import CopyTokens, copy_eval_batch, copy_train_batch
    from iclr26_sequence_models.data.mqar import multiquery_ar
    from iclr26_sequence_models.data.state_tracking import make_group, word_problem
    from iclr26_sequence_models.layers.attention import Attention, ForgettingAttention
    from iclr26_sequence_models.layers.conv import ShortConvolution
    from iclr26_sequence_models.layers.gdn import GatedDeltaNet
    from iclr26_sequence_models.layers.gla import GatedLinearAttention
    from iclr26_sequence_models.layers.rotary import NoPE, RoPE, SelectiveRoPE, apply_rotary, rotary_temperature
    from iclr26_sequence_models.methods.selective_rope.config import SelectiveRopeConfig
    from iclr26_sequence_models.nn.hf import SelectiveRopeForCausalLM, SelectiveRopeLMConfig
    from iclr26_sequence_models.nn.model import SequenceModel
    from iclr26_sequence_models.ops.delta_rule import chunk_gated_delta_rule, naive_recurrent_gated_delta_rule
    from iclr26_sequence_models.ops.gla import chunk_gla, naive_recurrent_gla


_EXPORTS: dict[str, str] = {
    "naive_recurrent_gla": "iclr26_sequence_models.ops.gla",
    "chunk_gla": "iclr26_sequence_models.ops.gla",
    "naive_recurrent_gated_delta_rule": "iclr26_sequence_models.ops.delta_rule",
    "chunk_gated_delta_rule": "iclr26_sequence_models.ops.delta_rule",
    "SelectiveRoPE": "iclr26_sequence_models.layers.rotary",
    "RoPE": "iclr26_sequence_models.layers.rotary",
    "NoPE": "iclr26_sequence_models.layers.rotary",
    "apply_rotary": "iclr26_sequence_models.layers.rotary",
    "rotary_temperature": "iclr26_sequence_models.layers.rotary",
    "ShortConvolution": "iclr26_sequence_models.layers.conv",
    "GatedLinearAttention": "iclr26_sequence_models.layers.gla",
    "GatedDeltaNet": "iclr26_sequence_models.layers.gdn",
    "Attention": "iclr26_sequence_models.layers.attention",
    "ForgettingAttention": "iclr26_sequence_models.layers.attention",
    "SequenceModel": "iclr26_sequence_models.nn.model",
    "multiquery_ar": "iclr26_sequence_models.data.mqar",
    "word_problem": "iclr26_sequence_models.data.state_tracking",
    "make_group": "iclr26_sequence_models.data.state_tracking",
    "load_bible": "iclr26_sequence_models.data.bible",
    "copy_train_batch": "iclr26_sequence_models.data.copying",
    "copy_eval_batch": "iclr26_sequence_models.data.copying",
    "CopyTokens": "iclr26_sequence_models.data.copying",
    "SelectiveRopeConfig": "iclr26_sequence_models.methods.selective_rope.config",
    "SelectiveRopeForCausalLM": "iclr26_sequence_models.nn.hf",
    "SelectiveRopeLMConfig": "iclr26_sequence_models.nn.hf",
}

__all__ = [
    "Attention",
    "CopyTokens",
    "ForgettingAttention",
    "GatedDeltaNet",
    "GatedLinearAttention",
    "NoPE",
    "RoPE",
    "SelectiveRoPE",
    "SelectiveRopeConfig",
    "SelectiveRopeForCausalLM",
    "SelectiveRopeLMConfig",
    "SequenceModel",
    "ShortConvolution",
    "apply_rotary",
    "chunk_gated_delta_rule",
    "chunk_gla",
    "copy_eval_batch",
    "copy_train_batch",
    "load_bible",
    "make_group",
    "multiquery_ar",
    "naive_recurrent_gated_delta_rule",
    "naive_recurrent_gla",
    "rotary_temperature",
    "word_problem",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
