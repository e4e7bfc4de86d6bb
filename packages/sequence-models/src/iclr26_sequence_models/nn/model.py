"""``SequenceModel``: a small causal LM built from any host layer (embedding, pre-norm blocks, SwiGLU MLP, head).

Block: ``h = h + mixer(RMSNorm(h))``; ``h = h + MLP(RMSNorm(h))``; logits = ``W_out RMSNorm(h)``.
Initialisation follows fla: every Linear, Conv1d and Embedding weight ~ N(0, 0.02²), biases 0
(SelectiveRoPE's weight-normalised full-rank projection keeps its own Kaiming init).
Incremental decoding: ``model(ids, cache)`` returns ``(logits, cache)``; feeding a sequence in pieces
with the returned cache gives the same logits as one full pass.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from iclr26_sequence_models.layers.attention import Attention, ForgettingAttention
from iclr26_sequence_models.layers.conv import ShortConvolution
from iclr26_sequence_models.layers.gdn import GatedDeltaNet
from iclr26_sequence_models.layers.gla import GatedLinearAttention
from iclr26_sequence_models.layers.norm import RMSNorm

__all__ = ["LAYERS", "LayerName", "SequenceModel", "SwiGLU"]

LayerName = Literal["gla", "gdn", "attn", "fox"]
LAYERS: dict[str, type[nn.Module]] = {
    "gla": GatedLinearAttention,
    "gdn": GatedDeltaNet,
    "attn": Attention,
    "fox": ForgettingAttention,
}


class SwiGLU(nn.Module):
    """``W_down (silu(W_gate x) ⊙ W_up x)`` with fla's width ``round_up(2/3 · ratio · D, 32)``."""

    def __init__(self, hidden_size: int, hidden_ratio: int = 4) -> None:
        super().__init__()
        inner = 32 * ((int(hidden_size * hidden_ratio * 2 / 3) + 31) // 32)
        self.gate_proj = nn.Linear(hidden_size, inner, bias=False)
        self.up_proj = nn.Linear(hidden_size, inner, bias=False)
        self.down_proj = nn.Linear(inner, hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x: [..., D]`` → ``[..., D]``."""
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class _Block(nn.Module):
    def __init__(self, mixer: nn.Module, hidden_size: int, hidden_ratio: int, norm_eps: float) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(hidden_size, norm_eps)
        self.mixer = mixer
        self.mlp_norm = RMSNorm(hidden_size, norm_eps)
        self.mlp = SwiGLU(hidden_size, hidden_ratio)

    def forward(self, h: torch.Tensor, cache: dict[str, Any] | None) -> tuple[torch.Tensor, dict[str, Any]]:
        y, new = self.mixer(self.attn_norm(h), cache)
        h = h + y
        return h + self.mlp(self.mlp_norm(h)), new


class SequenceModel(nn.Module, PyTorchModelHubMixin):
    """Causal LM ``ids [B, T] → logits [B, T, vocab]``.

    ``save_pretrained(dir)`` / ``SequenceModel.from_pretrained(dir)`` (huggingface_hub's
    ``PyTorchModelHubMixin``: safetensors + the ``__init__`` arguments as ``config.json``; offline from a
    local folder).

    Args:
        vocab_size: Number of tokens.
        hidden_size: Width D.
        num_layers: Number of blocks.
        layer: Host mixer: ``"gla" | "gdn" | "attn" | "fox"``.
        num_heads: Heads of the mixer.
        position: ``"nope" | "rope" | "selective"``.
        position_options: Options of the position encoding (see :func:`build_position`).
        layer_options: Extra keyword arguments of the mixer (e.g. ``expand_k`` for GLA).
        hidden_ratio: MLP ratio; norm_eps: RMSNorm epsilon; initializer_range: init std.
    """

    def __init__(
        self,
        vocab_size: int,
        hidden_size: int = 128,
        num_layers: int = 2,
        layer: LayerName = "gla",
        num_heads: int = 4,
        position: str = "nope",
        position_options: dict[str, Any] | None = None,
        layer_options: dict[str, Any] | None = None,
        hidden_ratio: int = 4,
        norm_eps: float = 1e-6,
        initializer_range: float = 0.02,
    ) -> None:
        super().__init__()
        if layer not in LAYERS:
            raise ValueError(f"SequenceModel: unknown layer {layer!r}; expected one of {sorted(LAYERS)}")
        self.embeddings = nn.Embedding(vocab_size, hidden_size)
        self.blocks = nn.ModuleList(
            _Block(
                LAYERS[layer](
                    hidden_size,
                    num_heads=num_heads,
                    position=position,
                    position_options=position_options,
                    **(layer_options or {}),
                ),
                hidden_size,
                hidden_ratio,
                norm_eps,
            )
            for _ in range(num_layers)
        )
        self.norm = RMSNorm(hidden_size, norm_eps)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)
        self._init(initializer_range)

    def _init(self, std: float) -> None:
        for m in self.modules():
            if isinstance(m, nn.Linear | nn.Embedding):
                nn.init.normal_(m.weight, 0.0, std)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, ShortConvolution):
                nn.init.normal_(m.weight, 0.0, std)

    def forward(
        self, input_ids: torch.Tensor, cache: list[dict[str, Any]] | None = None
    ) -> tuple[torch.Tensor, list[dict[str, Any]]]:
        """``input_ids [B, T]`` (+ the cache of the previous call) → ``(logits [B, T, vocab], new cache)``."""
        if input_ids.dim() != 2 or input_ids.shape[1] < 1:
            raise ValueError(f"SequenceModel: input_ids must be [B, T] with T >= 1, got {tuple(input_ids.shape)}")
        h = self.embeddings(input_ids)
        new_cache = []
        for i, block in enumerate(self.blocks):
            h, c = block(h, cache[i] if cache is not None else None)
            new_cache.append(c)
        return self.lm_head(self.norm(h)), new_cache

    def num_parameters(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
