"""The policy of ``semantic-voting``: a tiny Llama pre-trained here to partial competence at writing numbers
in words (its labelled pretrain split only), and the task."""

from __future__ import annotations

from typing import Any

import torch

from iclr26_sequence_models.methods.semantic_voting.config import SemanticVotingConfig
from iclr26_sequence_models.selfimprove.models import CharCodec, tiny_llama
from iclr26_sequence_models.selfimprove.tasks import NumberWordsTask
from iclr26_sequence_models.selfimprove.training import supervised_pretrain

__all__ = ["build_base"]


def build_base(
    cfg: SemanticVotingConfig, device: torch.device, seed: int
) -> tuple[NumberWordsTask, Any, CharCodec, list[float]]:
    """Task splits, the pre-trained (then frozen) base model, its codec and the pre-training losses."""
    task = NumberWordsTask(
        digits=cfg.digits, sizes={"pretrain": cfg.n_pretrain, "train": cfg.n_train, "test": cfg.n_test}, seed=seed
    )
    codec = CharCodec(NumberWordsTask.ALPHABET)
    context = cfg.digits + 3 + max(cfg.max_new_tokens, task.max_words_len + 2) + 2 * cfg.max_new_tokens
    model = tiny_llama(
        codec.vocab_size,
        hidden_size=cfg.tiny_hidden,
        num_layers=cfg.tiny_layers,
        num_heads=cfg.tiny_heads,
        max_positions=context,
        seed=seed,
    ).to(device)
    pairs = [(it.prompt, it.reference) for it in task.splits["pretrain"]]
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
    return task, model, codec, losses
