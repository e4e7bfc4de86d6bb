"""GRPO, TTRL and RESTRAIN losses over any causal LM's token log-probs.

Shapes: one prompt group has ``n`` rollouts of at most ``T`` completion tokens. ``logp``, ``old_logp`` and
``ref_logp`` are ``[n, T]`` (log π of each sampled token), ``mask`` is ``[n, T]`` (1 on completion
tokens up to and including EOS), advantages are ``[n]`` or, for RESTRAIN's per-candidate losses,
``[m, n]``.

GRPO (Shao et al. 2024) minimises, per prompt,

    L_GRPO(x) = (1/n) Σ_i (1/|o_i|) Σ_t [ −min(ρ_{i,t} A_i, clip(ρ_{i,t}, 1−ε, 1+ε) A_i) + β KL_{i,t} ]

with ``ρ = exp(logp − old_logp)``, the group-normalised advantage ``A_i = (r_i − mean r) / (std r + ε_A)``
and the unbiased per-token KL estimator ``KL = exp(ref − logp) − (ref − logp) − 1`` to the frozen
reference. RESTRAIN (Yu et al., ICLR 2026, §3, final loss) is

    L_RESTRAIN(x) = u_x Σ_j w_j L̃_GRPO(x, a_j)

one GRPO loss per candidate label ``a_j`` (reward ``r_{i,j} = 1[ans_i = a_j]``), weighted by the
pseudo-label weights ``w_j`` and the offline prompt weight ``u_x``; when the majority count is under ``κ``
all candidates' advantages become ``−δ`` (negative rollout penalisation). Because of the min/clip, the
weighted sum of losses is *not* one GRPO loss with the summed advantage, so it is computed per candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from iclr26_sequence_models.selfimprove.voting import gaussian_shape, pseudo_label_weights, vote_stats

__all__ = [
    "GroupTargets",
    "RestrainSettings",
    "gold_targets",
    "group_advantages",
    "grpo_loss",
    "prompt_weight",
    "restrain_targets",
    "token_logprobs",
]


def group_advantages(rewards: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    """``A_i = (r_i − mean_i r) / (std_i r + eps)`` over the last dim (``[..., n]``, n >= 2; unbiased std as
    in TRL's GRPOTrainer). A group whose rewards all agree gets zero advantages."""
    if rewards.shape[-1] < 2:
        raise ValueError(f"group_advantages: need at least 2 rollouts per group, got {rewards.shape[-1]}")
    r = rewards.float()
    return (r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True) + eps)


def grpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_eps: float = 0.2,
    ref_logp: torch.Tensor | None = None,
    kl_beta: float = 0.0,
) -> torch.Tensor:
    """GRPO's clipped surrogate (to minimise) for one group.

    Args:
        logp: ``[n, T]`` log-probs of the sampled tokens under the current policy (with grad).
        old_logp: ``[n, T]`` the same under the policy that sampled them (no grad).
        advantages: ``[n]``, or ``[m, n]`` for ``m`` candidate labels at once.
        mask: ``[n, T]`` completion mask.
        clip_eps: ``ε`` of the ratio clip.
        ref_logp: ``[n, T]`` log-probs under the frozen reference (needed when ``kl_beta > 0``).
        kl_beta: ``β`` of the KL penalty.

    Returns:
        ``[]`` for ``[n]`` advantages, ``[m]`` (one loss per candidate) for ``[m, n]``.
    """
    if logp.shape != old_logp.shape or logp.shape != mask.shape:
        raise ValueError(
            f"grpo_loss: logp {tuple(logp.shape)}, old_logp {tuple(old_logp.shape)} and mask "
            f"{tuple(mask.shape)} must have the same [n, T] shape"
        )
    if advantages.shape[-1] != logp.shape[0]:
        raise ValueError(f"grpo_loss: advantages {tuple(advantages.shape)} do not end in n = {logp.shape[0]}")
    ratio = torch.exp(logp - old_logp)
    adv = advantages.to(logp.dtype).unsqueeze(-1)  # [..., n, 1]
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1.0 - clip_eps, 1.0 + clip_eps) * adv)
    per_token = -surrogate
    if kl_beta > 0:
        if ref_logp is None:
            raise ValueError("grpo_loss: kl_beta > 0 needs ref_logp")
        diff = ref_logp - logp
        per_token = per_token + kl_beta * (torch.exp(diff) - diff - 1.0)
    m = mask.to(logp.dtype)
    per_seq = (per_token * m).sum(-1) / m.sum(-1).clamp(min=1.0)  # [..., n]
    return per_seq.mean(-1)


@dataclass(frozen=True)
class RestrainSettings:
    """RESTRAIN's knobs (paper §3): Gaussian centre ``k`` and bandwidth ``sigma`` of the pseudo-label
    weights (``sigma = 0``: all weight on the share closest to ``k``), NRP threshold ``kappa`` on the majority
    count (0 disables NRP) and offset ``delta``."""

    k: float = 1.0
    sigma: float = 0.3
    kappa: int = 3
    delta: float = 0.5

    @classmethod
    def ttrl(cls) -> RestrainSettings:
        """TTRL as the special case ``σ → 0, k = 1, κ = 0``: the majority answer is the only label."""
        return cls(k=1.0, sigma=0.0, kappa=0, delta=0.0)


@dataclass(frozen=True)
class GroupTargets:
    """What one prompt's loss needs: ``advantages [m, n]`` and candidate ``weights [m]`` (summing to 1),
    plus diagnostics: was the group penalised (NRP), its majority answer and vote share, ``minority_weight``
    (the pseudo-label weight on candidates with fewer votes than the majority, where pseudo-label weighting
    acts beyond TTRL's tie-splitting), ``majority_weight`` (the weight on the most-voted candidate(s); NaN
    where no pseudo-label weights apply: a penalised or unparsed group, gold rewards) and ``n_candidates``
    (distinct parsable answers)."""

    advantages: torch.Tensor
    weights: torch.Tensor
    penalised: bool
    majority: str | None
    majority_share: float
    minority_weight: float = 0.0
    majority_weight: float = float("nan")
    n_candidates: int = 0


def restrain_targets(answers: Sequence[str | None], s: RestrainSettings, adv_eps: float = 1e-4) -> GroupTargets:
    """Per-candidate advantages and weights of one prompt (RESTRAIN §3; TTRL with :meth:`RestrainSettings.ttrl`).

    * ``M(x) < κ``: negative rollout penalisation, ``r̃ = 0`` so ``Ã_i = A_i − δ = −δ`` for every rollout
      (one row, weight 1);
    * otherwise candidate ``a_j`` has rewards ``r_{i,j} = 1[ans_i = a_j]``, group-normalised advantages
      and weight ``w_j`` (:func:`~iclr26_sequence_models.selfimprove.voting.pseudo_label_weights`).
    """
    v = vote_stats(answers)
    n = v.n
    if v.majority_count < s.kappa:
        adv = torch.full((1, n), -float(s.delta))
        return GroupTargets(adv, torch.ones(1), True, v.majority, v.majority_count / n, n_candidates=len(v.candidates))
    if not v.candidates:  # nothing parsed and NRP off: zero advantages, only the KL term acts
        return GroupTargets(torch.zeros(1, n), torch.ones(1), False, None, 0.0)
    rewards = torch.tensor([[1.0 if a == c else 0.0 for a in answers] for c in v.candidates])
    weights = torch.tensor(pseudo_label_weights(v.shares, s.k, s.sigma))
    minority = float(sum(float(w) for w, c in zip(weights, v.counts, strict=True) if c < v.majority_count))
    top = float(sum(float(w) for w, c in zip(weights, v.counts, strict=True) if c == v.majority_count))
    keep = weights > 0
    return GroupTargets(
        group_advantages(rewards[keep], adv_eps),
        weights[keep],
        False,
        v.majority,
        v.majority_count / n,
        minority,
        majority_weight=top,
        n_candidates=len(v.candidates),
    )


def gold_targets(scores: Sequence[float], adv_eps: float = 1e-4) -> GroupTargets:
    """GRPO with ground-truth rewards (the paper's upper bound): one candidate, rewards = grader scores."""
    adv = group_advantages(torch.tensor([list(map(float, scores))]), adv_eps)
    return GroupTargets(adv, torch.ones(1), False, None, float("nan"))


def prompt_weight(ref_answers: Sequence[str | None], k: float, sigma: float) -> float:
    """RESTRAIN's offline prompt weight ``u_x = g(c_ref / n)`` from the frozen base model's rollouts."""
    v = vote_stats(ref_answers)
    return gaussian_shape(v.majority_count / v.n, k, sigma)


def token_logprobs(
    model: torch.nn.Module,
    sequences: torch.Tensor,
    attention_mask: torch.Tensor,
    prompt_len: int,
    *,
    temperature: float = 1.0,
    micro_batch: int = 0,
) -> torch.Tensor:
    """``log π(o_t | x, o_<t)`` of every completion token: ``[B, L]`` left-padded prompt + completion in,
    ``[B, L − prompt_len]`` out. Position ids follow the attention mask (as in generation), so left padding
    does not shift positions; logits are divided by the sampling temperature (as TRL does).

    ``micro_batch > 0`` runs the model on that many rows at a time (the fp32 ``[rows, T, V]`` logits of one
    chunk only are alive at once; with grad the chunks' graphs all stay until backward, so a training pass
    micro-batches by calling this per chunk and backpropagating each). The result equals the one-pass one
    up to float rounding of the batched matmuls."""
    if prompt_len < 1 or prompt_len >= sequences.shape[1]:
        raise ValueError(f"token_logprobs: prompt_len {prompt_len} must be in [1, {sequences.shape[1] - 1}]")
    if micro_batch > 0 and sequences.shape[0] > micro_batch:
        return torch.cat(
            [
                token_logprobs(
                    model,
                    sequences[i : i + micro_batch],
                    attention_mask[i : i + micro_batch],
                    prompt_len,
                    temperature=temperature,
                )
                for i in range(0, sequences.shape[0], micro_batch)
            ]
        )
    position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=sequences, attention_mask=attention_mask, position_ids=position_ids)
    logits = out.logits[:, prompt_len - 1 : -1].float() / temperature
    targets = sequences[:, prompt_len:]
    return torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
