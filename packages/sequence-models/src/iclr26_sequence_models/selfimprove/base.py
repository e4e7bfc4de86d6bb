"""The tiny base policy of the CPU presets of ``restrain`` and ``semantic-voting``.

Both methods start label-free self-improvement from a small Llama over a character vocabulary that was
brought to *partial* competence by supervised pre-training on a labelled split that self-improvement never
sees. :func:`pretrain_tiny_base` is that one set-up (codec, seeded model, next-token pre-training, frozen
eval mode); each method only says which alphabet, which ``(prompt, target)`` pairs and which context length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import torch

from iclr26_sequence_models.selfimprove.models import CharCodec, tiny_llama
from iclr26_sequence_models.selfimprove.training import supervised_pretrain

__all__ = ["TinyBaseConfig", "pretrain_tiny_base"]


class TinyBaseConfig(Protocol):
    """The config fields of a method that pre-trains the tiny base (both methods' configs have them)."""

    @property
    def tiny_hidden(self) -> int: ...
    @property
    def tiny_layers(self) -> int: ...
    @property
    def tiny_heads(self) -> int: ...
    @property
    def pretrain_steps(self) -> int: ...
    @property
    def pretrain_batch(self) -> int: ...
    @property
    def pretrain_lr(self) -> float: ...


def pretrain_tiny_base(
    cfg: TinyBaseConfig,
    alphabet: str,
    pairs: Sequence[tuple[str, str]],
    *,
    max_positions: int,
    seed: int,
    device: torch.device,
) -> tuple[torch.nn.Module, CharCodec, list[float]]:
    """A seeded :func:`~iclr26_sequence_models.selfimprove.models.tiny_llama` (width ``tiny_hidden``,
    ``tiny_layers`` layers, ``tiny_heads`` heads, context ``max_positions``) over ``CharCodec(alphabet)``,
    pre-trained for ``pretrain_steps`` AdamW steps (batch ``pretrain_batch``, lr ``pretrain_lr``, cosine
    decay) on the next-token loss of each pair's target (``pairs``: ``(prompt, target)`` texts), then put in
    eval mode. Returns ``(model, codec, loss per pre-training step)``; 0 steps leaves the random init."""
    codec = CharCodec(alphabet)
    model = tiny_llama(
        codec.vocab_size,
        hidden_size=cfg.tiny_hidden,
        num_layers=cfg.tiny_layers,
        num_heads=cfg.tiny_heads,
        max_positions=max_positions,
        seed=seed,
    ).to(device)
    losses = supervised_pretrain(
        model,
        codec,
        pairs,
        steps=cfg.pretrain_steps,
        batch_size=cfg.pretrain_batch,
        lr=cfg.pretrain_lr,
        seed=seed,
        device=device,
    )
    model.eval()
    return model, codec, losses
