"""The policy of ``restrain``: the tiny Llama pre-trained here to partial competence, or SmolLM2-135M."""

from __future__ import annotations

from typing import Any

import torch

from iclr26_sequence_models.methods.restrain.config import RestrainConfig
from iclr26_sequence_models.selfimprove.base import pretrain_tiny_base
from iclr26_sequence_models.selfimprove.models import Codec, load_smollm2
from iclr26_sequence_models.selfimprove.tasks import ArithmeticTask

__all__ = ["build_base", "build_task"]


def build_task(cfg: RestrainConfig, seed: int) -> ArithmeticTask:
    """The chain_sum splits (disjoint expressions), compact prompts for the tiny model, chat otherwise."""
    return ArithmeticTask(
        terms=cfg.terms,
        digits=cfg.digits,
        sizes={"pretrain": cfg.n_pretrain, "train": cfg.n_train, "test": cfg.n_test},
        seed=seed,
        style="compact" if cfg.model == "tiny" else "chat",
    )


def build_base(
    cfg: RestrainConfig, task: ArithmeticTask, device: torch.device, seed: int
) -> tuple[Any, Codec, list[float]]:
    """The frozen base model, its codec and the pre-training loss curve (empty for SmolLM2, which is used
    as released). The tiny model is pre-trained on the labelled *pretrain* split only."""
    if cfg.model == "smollm2":
        model, hf_codec = load_smollm2(device)
        model.eval()
        return model, hf_codec, []
    prompts = [p.prompt for split in task.splits.values() for p in split]
    max_prompt = max(len(prompt) for prompt in prompts) + 1  # CharCodec: one id per character, plus BOS
    model, codec, losses = pretrain_tiny_base(
        cfg,
        ArithmeticTask.ALPHABET,
        [(p.prompt, task.target(p)) for p in task.splits["pretrain"]],
        max_positions=max(32, max_prompt + cfg.max_new_tokens + 8),
        seed=seed,
        device=device,
    )
    return model, codec, losses
