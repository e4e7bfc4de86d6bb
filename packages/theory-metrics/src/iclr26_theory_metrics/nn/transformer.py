"""The small transformer of the grokking setup (Nanda et al., 2023; used by Nam et al., ICLR 2026, for D_LR
across grokking): token and learned position embeddings, ``layers`` pre-norm blocks of multi-head self-attention
and a ReLU MLP, and the residual stream at the last position ("=") as the penultimate features; the unembedding
is the :class:`~iclr26_theory_metrics.nn.models.FeatureClassifier`'s ``classifier``, so the neural-collapse and
richness metrics read ``features(x)`` and ``classifier`` as for the image models.
"""

from __future__ import annotations

import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from iclr26_theory_metrics.nn.models import FeatureClassifier

__all__ = ["ModularTransformer"]


class _Block(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_dim: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_dim), nn.ReLU(), nn.Linear(mlp_dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class _Body(nn.Module):
    def __init__(self, vocab: int, length: int, dim: int, heads: int, mlp_dim: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(length, dim) * 0.02)
        self.blocks = nn.ModuleList([_Block(dim, heads, mlp_dim) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.norm(x[:, -1])


class ModularTransformer(FeatureClassifier, PyTorchModelHubMixin):
    """``tokens [B, L]`` (L ≤ ``length``) → logits ``[B, num_classes]``; ``features(tokens)`` is ``[B, dim]``.
    ``save_pretrained(dir)`` / ``ModularTransformer.from_pretrained(dir)`` (huggingface_hub's mixin: safetensors
    and the ``__init__`` arguments as ``config.json``, offline from a local folder).

    Args:
        vocab: Number of token ids (P + 1 for modular addition).
        num_classes: Output classes (P).
        dim: Residual width (the paper's setup: 128).
        heads: Attention heads (``dim`` must be divisible by it).
        mlp_dim: Hidden width of the MLPs (4·dim by convention).
        layers: Transformer blocks (2 in the paper's grokking run).
        length: Maximum sequence length (3 for ``[a, b, =]``).
    """

    def __init__(
        self,
        vocab: int,
        num_classes: int,
        *,
        dim: int = 128,
        heads: int = 4,
        mlp_dim: int = 512,
        layers: int = 2,
        length: int = 3,
    ) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim = {dim} must be divisible by heads = {heads}")
        self.body = _Body(vocab, length, dim, heads, mlp_dim, layers)
        self.classifier = nn.Linear(dim, num_classes, bias=False)
