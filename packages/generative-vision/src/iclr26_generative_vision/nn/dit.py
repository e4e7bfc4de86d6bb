"""A small class-conditional DiT built from diffusers' own blocks.

Patchify with diffusers' ``PatchEmbed`` (2-D sin-cos positions), conditioning ``c = emb(t) + emb(y)``
(diffusers' ``Timesteps`` + ``TimestepEmbedding``, a label table with a null label ∅ for classifier-free
guidance), ``depth`` diffusers ``BasicTransformerBlock``s in adaLN-single form (PixArt-α:
``norm_type="ada_norm_single"``, one shared projection ``c → 6·H`` of shift/scale/gate), and the DiT final
layer (adaptive LayerNorm, linear, unpatchify). The blocks are ``self.transformer_blocks``, the name
diffusers' layer-skip hooks find automatically, so every diffusers guider works on this model unchanged.

Shapes: ``sample`` ``[B, C, H, W]``, ``timestep`` ``[B]``, ``class_labels`` ``[B]`` → prediction ``[B, C, H, W]``.
"""

from __future__ import annotations

from typing import cast

import torch
from diffusers.configuration_utils import ConfigMixin, register_to_config
from diffusers.models.attention import BasicTransformerBlock
from diffusers.models.attention_processor import Attention
from diffusers.models.embeddings import PatchEmbed, TimestepEmbedding, Timesteps
from diffusers.models.modeling_utils import ModelMixin
from torch import nn

from iclr26_shared.errors import ConfigError

__all__ = ["ClassConditionalDiT", "DirectAttention"]


class DirectAttention(Attention):
    """diffusers' ``Attention`` that calls its processor directly when no extra keyword arguments are given.

    ``Attention.forward`` reads ``inspect.signature(processor.__call__)`` on every call to filter keyword
    arguments, about 11 of the quick S² run's 700 CPU-s on the 8×8 DiT (65k attention calls); with none
    to filter, the processor call is the same (outputs bit for bit, tested). Extra arguments take the
    parent's path. The DiT's blocks get this class after construction (same weights and state-dict keys).
    """

    def forward(
        self,
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        **cross_attention_kwargs: object,
    ) -> torch.Tensor:
        if cross_attention_kwargs:
            return super().forward(hidden_states, encoder_hidden_states, attention_mask, **cross_attention_kwargs)
        return self.processor(
            self, hidden_states, encoder_hidden_states=encoder_hidden_states, attention_mask=attention_mask
        )


class ClassConditionalDiT(ModelMixin, ConfigMixin):
    """Class-conditional diffusion transformer (ε-prediction by default); a diffusers model
    (``save_pretrained`` / ``ClassConditionalDiT.from_pretrained``, ``config``).

    Args:
        sample_size: Image side ``S`` (square images).
        in_channels: Channels ``C``.
        num_classes: ``K``; label ``K`` is the null label.
        patch_size: Patch side ``p`` (``S`` divisible by ``p``).
        hidden: Width ``H`` (divisible by ``heads``).
        depth: Number of transformer blocks.
        heads: Attention heads.
        activation: The blocks' MLP activation: ``"gelu-approximate"`` (tanh GELU, DiT's) or ``"gelu"``
            (exact erf GELU; 3.6x faster forward on CPU; the two differ by at most 4.7e-4).
    """

    @register_to_config
    def __init__(
        self,
        sample_size: int,
        in_channels: int,
        num_classes: int,
        patch_size: int = 2,
        hidden: int = 96,
        depth: int = 8,
        heads: int = 4,
        activation: str = "gelu-approximate",
    ) -> None:
        super().__init__()
        if sample_size % patch_size:
            raise ConfigError("patch_size", patch_size, f"a divisor of the image size {sample_size}")
        if hidden % heads:
            raise ConfigError("dit_heads", heads, f"a divisor of the width {hidden}")
        if activation not in ("gelu-approximate", "gelu"):
            raise ConfigError("dit_activation", activation, "'gelu-approximate' (tanh, DiT's) or 'gelu' (exact)")
        self.sample_size, self.in_channels, self.num_classes = sample_size, in_channels, num_classes
        self.patch_size, self.hidden = patch_size, hidden
        self.pos_embed = PatchEmbed(
            height=sample_size, width=sample_size, patch_size=patch_size, in_channels=in_channels, embed_dim=hidden
        )
        self.time_proj = Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.time_embedding = TimestepEmbedding(256, hidden)
        self.label_embedding = nn.Embedding(num_classes + 1, hidden)
        self.adaln_single = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 6 * hidden))
        self.transformer_blocks = nn.ModuleList(
            BasicTransformerBlock(
                hidden,
                heads,
                hidden // heads,
                activation_fn=activation,
                norm_type="ada_norm_single",
                norm_elementwise_affine=False,
                norm_eps=1e-6,
            )
            for _ in range(depth)
        )
        for block in self.transformer_blocks:  # skip diffusers' per-call signature inspection (DirectAttention)
            for attn in (block.attn1, block.attn2):
                if type(attn) is Attention:
                    attn.__class__ = DirectAttention
        self.norm_out = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.out_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 2 * hidden))
        self.proj_out = nn.Linear(hidden, patch_size * patch_size * in_channels)
        for linear in (cast(nn.Linear, self.adaln_single[1]), cast(nn.Linear, self.out_modulation[1])):
            nn.init.zeros_(linear.weight)
            nn.init.zeros_(linear.bias)
        nn.init.zeros_(self.proj_out.weight)
        nn.init.zeros_(self.proj_out.bias)

    @property
    def null_label(self) -> int:
        """The label index of the unconditional model (∅)."""
        return self.num_classes

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor) -> torch.Tensor:
        """ε̂ (or whatever the model was trained to predict), shaped like ``sample``."""
        b, c, s, _ = sample.shape
        p, g = self.patch_size, self.sample_size // self.patch_size
        h = self.pos_embed(sample)  # [B, N, H]
        cond = self.time_embedding(self.time_proj(timestep).to(h.dtype)) + self.label_embedding(class_labels)
        modulation = self.adaln_single(cond)  # [B, 6H]
        for block in self.transformer_blocks:
            h = block(h, timestep=modulation)
        shift, scale = self.out_modulation(cond).unsqueeze(1).chunk(2, dim=-1)
        h = self.proj_out(self.norm_out(h) * (1 + scale) + shift)  # [B, N, p·p·C]
        h = h.reshape(b, g, g, p, p, c).permute(0, 5, 1, 3, 2, 4)
        return h.reshape(b, c, s, s)
