"""Batched rollout generation with the KV cache (``model.generate``) for any Hugging Face causal LM."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from iclr26_sequence_models.selfimprove.models import Codec, stop_ids

__all__ = ["Rollouts", "generate_rollouts", "left_pad"]


@dataclass
class Rollouts:
    """``n`` sampled completions for each of ``P`` prompts, rollout ``p·n + i`` = prompt ``p``, sample ``i``.

    Attributes:
        sequences: ``[P·n, L]`` left-padded prompt (``prompt_len`` columns) followed by the completion.
        attention_mask: ``[P·n, L]`` 1 on real tokens.
        completion_mask: ``[P·n, L − prompt_len]`` 1 on completion tokens up to and including the first stop
            token (any of the codec's ``stop_ids``).
        prompt_len: Width of the (padded) prompt block.
        texts: ``P·n`` decoded completions (up to the first EOS).
        n: Rollouts per prompt.
    """

    sequences: torch.Tensor
    attention_mask: torch.Tensor
    completion_mask: torch.Tensor
    prompt_len: int
    texts: list[str]
    n: int

    def group(self, p: int) -> slice:
        """Rows of prompt ``p``."""
        return slice(p * self.n, (p + 1) * self.n)


def left_pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``[B, L]`` ids and attention mask with every row right-aligned (decoder-only batching)."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        if r:
            ids[i, width - len(r) :] = torch.tensor(list(r), dtype=torch.long)
            mask[i, width - len(r) :] = 1
    return ids, mask


def _context_length(model: Any) -> int | None:
    cfg = getattr(model, "config", None)
    value = getattr(cfg, "max_position_embeddings", None)
    return int(value) if value is not None else None


@torch.no_grad()
def generate_rollouts(
    model: Any,
    codec: Codec,
    prompts: Sequence[str],
    *,
    n: int,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_p: float = 1.0,
    seed: int = 0,
    greedy: bool = False,
) -> Rollouts:
    """Sample ``n`` completions per prompt (``temperature``, nucleus ``top_p``; ``greedy`` for argmax).

    Sampling is seeded with ``seed`` (global torch RNG, restored afterwards), so the same model, prompts
    and seed give the same rollouts. Raises ``ValueError`` for an empty prompt list, ``n < 1`` or a prompt
    that with ``max_new_tokens`` does not fit the model's context.
    """
    if not prompts:
        raise ValueError("generate_rollouts: no prompts (empty rollout batch)")
    if n < 1 or max_new_tokens < 1:
        raise ValueError(f"generate_rollouts: n ({n}) and max_new_tokens ({max_new_tokens}) must be >= 1")
    encoded = [codec.encode_prompt(p) for p in prompts]
    context = _context_length(model)
    for i, ids in enumerate(encoded):
        if not ids:
            raise ValueError(f"generate_rollouts: prompt {i} encodes to no tokens")
        if context is not None and len(ids) + max_new_tokens > context:
            raise ValueError(
                f"generate_rollouts: prompt {i} has {len(ids)} tokens; with max_new_tokens {max_new_tokens} "
                f"it exceeds the model context of {context}"
            )
    device = next(model.parameters()).device
    stops = sorted(stop_ids(codec))
    ids, mask = left_pad([r for r in encoded for _ in range(n)], codec.pad_id)
    ids, mask = ids.to(device), mask.to(device)
    was_training = model.training
    model.eval()
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(seed)
        kwargs: dict[str, Any] = (
            {"do_sample": False}
            if greedy
            else {"do_sample": True, "temperature": temperature, "top_p": top_p, "top_k": 0}
        )
        out = model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=max_new_tokens,
            pad_token_id=codec.pad_id,
            eos_token_id=stops if len(stops) > 1 else stops[0],
            use_cache=True,
            **kwargs,
        )
    model.train(was_training)
    prompt_len = ids.shape[1]
    completion = out[:, prompt_len:]
    if completion.shape[1] == 0:
        raise ValueError("generate_rollouts: the model generated no tokens")
    is_eos = torch.isin(completion, torch.tensor(stops, device=completion.device))
    after_eos = (is_eos.long().cumsum(-1) - is_eos.long()) > 0  # strictly after the first EOS
    comp_mask = (~after_eos).long()
    completion = completion.masked_fill(after_eos, codec.pad_id)
    sequences = torch.cat([ids, completion], dim=1)
    attention = torch.cat([mask, comp_mask], dim=1)
    texts = []
    for row, m in zip(completion.tolist(), comp_mask.tolist(), strict=True):
        toks = [t for t, keep in zip(row, m, strict=True) if keep and t not in stops]
        texts.append(codec.decode(toks))
    return Rollouts(sequences, attention, comp_mask, prompt_len, texts, n)


def pack_completions(
    codec: Codec, prompts: Sequence[str], completions: Sequence[str], device: torch.device | str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Given texts in the layout of :class:`Rollouts`: left-padded prompts, then each completion's ids + EOS,
    right-padded. Returns ``(sequences, attention_mask, completion_mask, prompt_len)``."""
    if len(prompts) != len(completions) or not prompts:
        raise ValueError(f"pack_completions: {len(prompts)} prompts and {len(completions)} completions")
    ids, mask = left_pad([codec.encode_prompt(p) for p in prompts], codec.pad_id)
    comps = [[*codec.encode_text(c), codec.eos_id] for c in completions]
    width = max(len(c) for c in comps)
    comp = torch.full((len(comps), width), codec.pad_id, dtype=torch.long)
    cmask = torch.zeros((len(comps), width), dtype=torch.long)
    for i, c in enumerate(comps):
        comp[i, : len(c)] = torch.tensor(c)
        cmask[i, : len(c)] = 1
    seq = torch.cat([ids, comp], 1).to(device)
    return seq, torch.cat([mask, cmask], 1).to(device), cmask.to(device), ids.shape[1]
