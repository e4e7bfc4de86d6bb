"""The policy of ``semantic-voting``: a tiny Llama pre-trained here to partial competence at the open-ended
task (its labelled pretrain split only), and the task (``scenes`` or ``number_words``)."""

from __future__ import annotations

from typing import Any

import torch

from iclr26_sequence_models.methods.semantic_voting.config import SemanticVotingConfig
from iclr26_sequence_models.selfimprove.base import pretrain_tiny_base
from iclr26_sequence_models.selfimprove.models import CharCodec
from iclr26_sequence_models.selfimprove.tasks import NumberWordsTask, SceneTask

__all__ = ["build_base", "build_task"]


def build_task(cfg: SemanticVotingConfig, seed: int) -> NumberWordsTask | SceneTask:
    """The task's pretrain / train / test splits (seeded)."""
    sizes = {"pretrain": cfg.n_pretrain, "train": cfg.n_train, "test": cfg.n_test}
    if cfg.task == "scenes":
        return SceneTask(sizes=sizes, seed=seed, renderings=cfg.renderings)
    return NumberWordsTask(digits=cfg.digits, sizes=sizes, seed=seed)


def build_base(
    cfg: SemanticVotingConfig, device: torch.device, seed: int
) -> tuple[NumberWordsTask | SceneTask, Any, CharCodec, list[float]]:
    """Task splits, the pre-trained (then frozen) base model, its codec and the pre-training losses."""
    task = build_task(cfg, seed)
    prompt_len = 1 + max(len(it.prompt) for items in task.splits.values() for it in items)
    # room for the longest completion twice: the self-judging prompt is prompt + candidate + "?"
    context = prompt_len + 2 * max(cfg.max_new_tokens, task.max_words_len + 2) + 2
    model, codec, losses = pretrain_tiny_base(
        cfg, task.ALPHABET, task.pretrain_pairs(), max_positions=context, seed=seed, device=device
    )
    return task, model, codec, losses
