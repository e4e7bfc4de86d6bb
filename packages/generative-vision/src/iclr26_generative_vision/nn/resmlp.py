"""A small residual-MLP denoiser for the Gaussian-mixture toy (the paper's "standard neural network").

``ε̂ = f(x_t, t, y)``: input projection, ``depth`` residual blocks ``h ← h + MLP(LN(h) + e)`` with the
conditioning ``e = emb(t) + emb(y)``, output projection. Label ``num_classes`` is the null label ∅ of
classifier-free guidance. The blocks live in ``self.blocks`` and are registered with diffusers'
layer-skip machinery, so S²/SLG/AutoGuidance can drop any of them (a dropped block is the identity).
"""

from __future__ import annotations

import torch
from diffusers.configuration_utils import ConfigMixin, register_to_config
from diffusers.models.embeddings import TimestepEmbedding, Timesteps
from diffusers.models.modeling_utils import ModelMixin
from torch import nn

from iclr26_generative_vision.guidance.blocks import register_skippable_block

__all__ = ["ResidualMLPBlock", "ResidualMLPDenoiser"]


@register_skippable_block
class ResidualMLPBlock(nn.Module):
    """``h + W₂ SiLU(W₁ (LN(h) + W_e e))``: ``hidden_states`` ``[B, H]``, ``emb`` ``[B, H]`` → ``[B, H]``."""

    def __init__(self, hidden: int, expansion: int = 2) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.cond = nn.Linear(hidden, hidden)
        self.fc1 = nn.Linear(hidden, expansion * hidden)
        self.fc2 = nn.Linear(expansion * hidden, hidden)

    def forward(self, hidden_states: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = self.norm(hidden_states) + self.cond(emb)
        return hidden_states + self.fc2(nn.functional.silu(self.fc1(h)))


class ResidualMLPDenoiser(ModelMixin, ConfigMixin):
    """Class-conditional ε-prediction MLP for low-dimensional data; a diffusers model (``save_pretrained`` /
    ``ResidualMLPDenoiser.from_pretrained``).

    Args:
        dim: Data dimension ``D``.
        num_classes: Number of classes ``K``; label ``K`` is the null label.
        hidden: Width ``H``.
        depth: Number of residual blocks.
    """

    @register_to_config
    def __init__(self, dim: int, num_classes: int, hidden: int = 128, depth: int = 6) -> None:
        super().__init__()
        self.dim, self.num_classes = dim, num_classes
        self.inp = nn.Linear(dim, hidden)
        self.time_proj = Timesteps(hidden, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.time_embedding = TimestepEmbedding(hidden, hidden)
        self.label_embedding = nn.Embedding(num_classes + 1, hidden)
        self.blocks = nn.ModuleList(ResidualMLPBlock(hidden) for _ in range(depth))
        self.out_norm = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, dim)

    @property
    def null_label(self) -> int:
        """The label index of the unconditional model (∅)."""
        return self.num_classes

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor) -> torch.Tensor:
        """``sample`` ``[B, D]``, ``timestep`` ``[B]`` (0..T−1), ``class_labels`` ``[B]`` → ε̂ ``[B, D]``."""
        temb = self.time_embedding(self.time_proj(timestep).to(sample.dtype))
        emb = temb + self.label_embedding(class_labels)
        h = self.inp(sample)
        for block in self.blocks:
            h = block(h, emb)
        return self.out(self.out_norm(h))
