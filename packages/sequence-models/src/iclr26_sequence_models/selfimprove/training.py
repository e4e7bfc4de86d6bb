"""Shared training helpers: supervised pre-training of a base model and sampled evaluation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from iclr26_sequence_models.selfimprove.generation import generate_rollouts
from iclr26_sequence_models.selfimprove.models import Codec
from iclr26_sequence_models.selfimprove.voting import vote_stats

__all__ = ["evaluate_samples", "supervised_batch", "supervised_pretrain"]


def supervised_batch(
    codec: Codec, pairs: Sequence[tuple[str, str]], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ``[B, L]`` ids, attention mask and labels (−100 except on the target and its EOS)."""
    rows, labels = [], []
    for prompt, target in pairs:
        p = codec.encode_prompt(prompt)
        t = [*codec.encode_text(target), codec.eos_id]
        rows.append(p + t)
        labels.append([-100] * len(p) + t)
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), codec.pad_id, dtype=torch.long)
    lab = torch.full((len(rows), width), -100, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (r, lb) in enumerate(zip(rows, labels, strict=True)):
        ids[i, : len(r)] = torch.tensor(r)
        lab[i, : len(lb)] = torch.tensor(lb)
        mask[i, : len(r)] = 1
    return ids.to(device), mask.to(device), lab.to(device)


def supervised_pretrain(
    model: torch.nn.Module,
    codec: Codec,
    pairs: Sequence[tuple[str, str]],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    device: torch.device,
) -> list[float]:
    """Next-token cross-entropy on the targets of ``(prompt, target)`` pairs (AdamW, cosine decay, seeded
    batches); returns the loss per step. Used to bring the tiny base model to *partial* competence."""
    if steps == 0:
        return []
    if not pairs:
        raise ValueError("supervised_pretrain: no training pairs")
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        idx = torch.randint(len(pairs), (batch_size,), generator=gen).tolist()
        ids, mask, labels = supervised_batch(codec, [pairs[i] for i in idx], device)
        logits = model(input_ids=ids, attention_mask=mask).logits
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(), labels[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    return losses


def evaluate_samples(
    model: Any,
    codec: Codec,
    prompts: Sequence[str],
    score: Callable[[int, str], float],
    extract: Callable[[str], str | None],
    *,
    samples: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
    chunk: int = 64,
) -> dict[str, float]:
    """Sampled evaluation: ``pass@1`` (mean score over ``samples`` samples per prompt), ``maj@samples``
    (score of the majority-vote answer), ``parse_rate`` and ``pass@1_se`` (standard error over prompts).
    ``score(i, answer)`` grades prompt ``i``'s answer."""
    total = maj = parsed = 0.0
    per_prompt: list[float] = []
    for start in range(0, len(prompts), chunk):
        part = list(prompts[start : start + chunk])
        roll = generate_rollouts(
            model, codec, part, n=samples, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed + start
        )
        answers = [extract(t) for t in roll.texts]
        for p in range(len(part)):
            group = answers[roll.group(p)]
            got = sum(score(start + p, a) if a is not None else 0.0 for a in group)
            total += got
            per_prompt.append(got / samples)
            parsed += sum(a is not None for a in group)
            top = vote_stats(group).majority
            maj += score(start + p, top) if top is not None else 0.0
    n = len(prompts)
    mean = total / (n * samples)
    var = sum((x - mean) ** 2 for x in per_prompt) / max(1, n - 1)
    return {
        "pass@1": mean,
        # standard error of pass@1 over prompts (each prompt's mean over its samples): the single-run noise
        "pass@1_se": (var / n) ** 0.5,
        f"maj@{samples}": maj / n,
        "parse_rate": parsed / (n * samples),
    }
