"""The policy of ``semantic-voting``: a tiny Llama pre-trained here to partial competence at writing numbers
in words (its labelled pretrain split only), and the task."""

from __future__ import annotations

from typing import Any

import torch

from iclr26_sequence_models.methods.semantic_voting.config import SemanticVotingConfig
from iclr26_sequence_models.selfimprove.base import pretrain_tiny_base
from iclr26_sequence_models.selfimprove.models import CharCodec
from iclr26_sequence_models.selfimprove.tasks import NumberWordsTask

__all__ = ["build_base"]


def build_base(
    cfg: SemanticVotingConfig, device: torch.device, seed: int
) -> tuple[NumberWordsTask, Any, CharCodec, list[float]]:
    """Task splits, the pre-trained (then frozen) base model, its codec and the pre-training losses."""
    task = NumberWordsTask(
        digits=cfg.digits, sizes={"pretrain": cfg.n_pretrain, "train": cfg.n_train, "test": cfg.n_test}, seed=seed
    )
    context = cfg.digits + 3 + max(cfg.max_new_tokens, task.max_words_len + 2) + 2 * cfg.max_new_tokens
    model, codec, losses = pretrain_tiny_base(
        cfg,
        NumberWordsTask.ALPHABET,
        [(it.prompt, it.reference) for it in task.splits["pretrain"]],
        max_positions=context,
        seed=seed,
        device=device,
    )
    return task, model, codec, losses
