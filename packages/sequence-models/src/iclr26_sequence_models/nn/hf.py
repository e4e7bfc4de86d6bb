"""Selective RoPE as a ``transformers`` model (as fla ships its layers): config, causal LM, registration.

``SelectiveRopeLMConfig`` (a ``PretrainedConfig``, ``model_type = "iclr26-selective-rope"``) holds the host
(``layer = gla | gdn | attn | fox``) and the rotation scheme (``position = selective | rope | none``) with
their options; ``SelectiveRopeForCausalLM`` (a ``PreTrainedModel`` + ``GenerationMixin``) wraps the
:class:`~iclr26_sequence_models.nn.model.SequenceModel` of that config under ``.model``, so
``generate()``, ``save_pretrained``/``from_pretrained`` (offline, a local folder) and the ``Auto*``
classes work once :func:`register` has run (importing this module runs it).

The recurrent cache is the model's own per-layer state (GLA/GDN: the ``[B, H, d_k, d_v]`` matrix
memory, short-conv tails, Selective RoPE's running phase; attention: keys/values). It is returned as
``outputs.cache`` and fed back by ``generate`` (the model declares no ``DynamicCache`` support, as
RWKV/xLSTM do), so decoding runs the step-by-step form while a full forward runs the chunked parallel
form; the two agree to float tolerance (tested).

Padding is not supported (the recurrent hosts have no mask): an ``attention_mask`` with zeros is
refused with a one-line error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    GenerationMixin,
    PretrainedConfig,
    PreTrainedModel,
)
from transformers.utils.generic import ModelOutput

from iclr26_sequence_models.nn.model import LAYERS, SequenceModel

__all__ = ["MODEL_TYPE", "SelectiveRopeCausalLMOutput", "SelectiveRopeLMConfig", "SelectiveRopeForCausalLM", "register"]

MODEL_TYPE = "iclr26-selective-rope"
POSITIONS = ("selective", "rope", "none")


class SelectiveRopeLMConfig(PretrainedConfig):
    """Config of :class:`SelectiveRopeForCausalLM`.

    Args:
        vocab_size: Number of tokens V.
        hidden_size: Width D; num_hidden_layers: blocks L; num_heads: heads H of the mixer.
        layer: Host mixer ``"gla" | "gdn" | "attn" | "fox"``.
        position: Rotation of q, k: ``"selective"`` (input-dependent phases, the paper's method),
            ``"rope"`` (fixed ``θ_t = ω t``) or ``"none"`` (NoPE).
        position_options: Options of the position module (``rope_theta`` for RoPE; SelectiveRoPE's
            keyword arguments, e.g. ``temp_type``, ``use_gate``, ``phi_parametrization``).
        layer_options: Extra keyword arguments of the mixer (e.g. ``expand_k``, ``use_short_conv`` for GLA).
        hidden_ratio: SwiGLU ratio; norm_eps: RMSNorm epsilon; initializer_range: init std (fla: 0.02).
    """

    model_type = MODEL_TYPE

    def __init__(
        self,
        vocab_size: int = 256,
        hidden_size: int = 128,
        num_hidden_layers: int = 2,
        num_heads: int = 4,
        layer: str = "gla",
        position: str = "selective",
        position_options: dict[str, Any] | None = None,
        layer_options: dict[str, Any] | None = None,
        hidden_ratio: int = 4,
        norm_eps: float = 1e-6,
        initializer_range: float = 0.02,
        **kwargs: Any,
    ) -> None:
        if layer not in LAYERS:
            raise ValueError(f"SelectiveRopeLMConfig.layer: {layer!r}; expected one of {sorted(LAYERS)}")
        if position not in POSITIONS:
            raise ValueError(f"SelectiveRopeLMConfig.position: {position!r}; expected one of {list(POSITIONS)}")
        self.vocab_size, self.hidden_size, self.num_hidden_layers = vocab_size, hidden_size, num_hidden_layers
        self.num_heads, self.layer, self.position = num_heads, layer, position
        self.position_options = dict(position_options or {})
        self.layer_options = dict(layer_options or {})
        self.hidden_ratio, self.norm_eps, self.initializer_range = hidden_ratio, norm_eps, initializer_range
        kwargs.setdefault("tie_word_embeddings", False)
        super().__init__(**kwargs)


@dataclass
class SelectiveRopeCausalLMOutput(ModelOutput):
    """``loss`` (mean next-token cross-entropy when ``labels`` are given), ``logits [B, T, V]``, ``cache``."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    cache: list[dict[str, Any]] | None = None


class SelectiveRopeForCausalLM(PreTrainedModel, GenerationMixin):
    """Causal LM ``input_ids [B, T] → logits [B, T, V]`` over a :class:`SequenceModel` (``self.model``)."""

    config_class = SelectiveRopeLMConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"
    _is_stateful = True

    def __init__(self, config: SelectiveRopeLMConfig) -> None:
        super().__init__(config)
        self.model = SequenceModel(
            vocab_size=config.vocab_size,
            hidden_size=config.hidden_size,
            num_layers=config.num_hidden_layers,
            layer=config.layer,  # type: ignore[arg-type]
            num_heads=config.num_heads,
            position="nope" if config.position == "none" else config.position,
            position_options=config.position_options,
            layer_options=config.layer_options,
            hidden_ratio=config.hidden_ratio,
            norm_eps=config.norm_eps,
            initializer_range=config.initializer_range,
        )
        self.post_init()

    @classmethod
    def _supports_default_dynamic_cache(cls) -> bool:
        return False  # the cache is the model's own per-layer state (returned as ``outputs.cache``)

    def _init_weights(self, module: torch.nn.Module) -> None:
        # SequenceModel initialises itself (fla's N(0, 0.02²), SelectiveRoPE's own init); loading
        # overwrites every weight. Non-persistent buffers (RoPE's inv_freq) are rebuilt here.
        inv = getattr(module, "inv_freq", None)
        if isinstance(inv, torch.Tensor) and hasattr(module, "head_k_dim"):
            base = float(self.config.position_options.get("rope_theta", 500_000.0))
            d = int(module.head_k_dim)  # type: ignore[arg-type]
            freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
            with torch.no_grad():
                inv.copy_(freq.float().to(inv.device))

    def get_input_embeddings(self) -> torch.nn.Module:
        return self.model.embeddings

    def set_input_embeddings(self, value: torch.nn.Module) -> None:
        self.model.embeddings = value  # type: ignore[assignment]

    def get_output_embeddings(self) -> torch.nn.Module:
        return self.model.lm_head

    def forward(  # type: ignore[override]
        self,
        input_ids: torch.Tensor,
        cache: list[dict[str, Any]] | None = None,
        attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        use_cache: bool | None = None,
        return_dict: bool | None = None,
        **kwargs: Any,
    ) -> SelectiveRopeCausalLMOutput:
        """``input_ids [B, T]`` (+ the ``cache`` of the previous call) → logits, loss if ``labels [B, T]``.

        ``labels`` follow the HF convention: shifted inside, ``-100`` ignored.
        """
        if attention_mask is not None and not bool(attention_mask.all()):
            raise ValueError(
                "SelectiveRopeForCausalLM: attention_mask has zeros; padding is not supported "
                "(pass unpadded sequences of equal length)"
            )
        logits, new_cache = self.model(input_ids, cache)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(
                logits[:, :-1].reshape(-1, logits.shape[-1]).float(), labels[:, 1:].reshape(-1), ignore_index=-100
            )
        kept = new_cache if use_cache is not False else None
        return SelectiveRopeCausalLMOutput(loss=loss, logits=logits, cache=kept)

    @classmethod
    def from_sequence_model(cls, seq: SequenceModel, config: SelectiveRopeLMConfig) -> SelectiveRopeForCausalLM:
        """The HF model of ``config`` holding a copy of a trained ``SequenceModel``'s weights."""
        hf = cls(config)
        hf.model.load_state_dict(seq.state_dict())
        return hf


def register() -> None:
    """Register the config and model with ``AutoConfig`` / ``AutoModelForCausalLM`` (idempotent)."""
    try:
        AutoConfig.register(MODEL_TYPE, SelectiveRopeLMConfig)
    except ValueError:  # already registered
        pass
    try:
        AutoModelForCausalLM.register(SelectiveRopeLMConfig, SelectiveRopeForCausalLM)
    except ValueError:
        pass


register()
