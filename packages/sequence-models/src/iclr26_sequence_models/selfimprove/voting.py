"""Label-free rewards from votes over one prompt's rollouts (torch-free).

Notation (RESTRAIN, Yu et al., ICLR 2026, §3): a prompt ``x`` gets ``n`` rollouts with extracted answers
``ans_1..ans_n`` (``None`` where no answer parses). The unique parsable answers are the candidates
``a_1..a_m`` with counts ``c_j`` and vote shares ``f_j = c_j / n``; ``M(x) = max_j c_j`` is the majority
count.

* TTRL (Zuo et al. 2025): the majority answer is the pseudo-label, reward ``r_i = 1[ans_i = a_maj]``.
* RESTRAIN pseudo-label weighting: every candidate is a label, weighted by a Gaussian of its vote share,
  ``w_j = g(f_j) / Σ_l g(f_l)`` with ``g(f) = exp(−(f − k)² / (2σ²))`` (centre ``k``, bandwidth ``σ``).
* RESTRAIN negative rollout penalisation: when ``M(x) < κ`` every rollout's advantage becomes ``−δ``.
* RESTRAIN prompt weighting: ``u_x = g(c_ref / n)`` with ``c_ref`` the majority count of the frozen base
  model's rollouts, computed once before training.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["VoteStats", "gaussian_shape", "majority_vote", "pseudo_label_weights", "vote_stats"]


@dataclass(frozen=True)
class VoteStats:
    """The votes of one prompt's ``n`` rollouts.

    Attributes:
        n: Number of rollouts (unparsable ones included).
        candidates: The unique parsable answers ``a_j``, most voted first (ties: first seen first).
        counts: ``c_j`` per candidate.
    """

    n: int
    candidates: tuple[str, ...]
    counts: tuple[int, ...]

    @property
    def shares(self) -> tuple[float, ...]:
        """``f_j = c_j / n``."""
        return tuple(c / self.n for c in self.counts)

    @property
    def majority_count(self) -> int:
        """``M(x) = max_j c_j`` (0 when no rollout gave a parsable answer)."""
        return max(self.counts, default=0)

    @property
    def majority(self) -> str | None:
        """The most voted answer (TTRL's pseudo-label), None when no rollout parsed."""
        return self.candidates[0] if self.candidates else None


def vote_stats(answers: Sequence[str | None]) -> VoteStats:
    """Count the parsable answers of one prompt's rollouts (``None`` marks an unparsable rollout)."""
    if not answers:
        raise ValueError("vote_stats: empty rollout group (need at least one rollout per prompt)")
    counter = Counter(a for a in answers if a is not None)
    first = {a: i for i, a in reversed(list(enumerate(answers))) if a is not None}
    ordered = sorted(counter, key=lambda a: (-counter[a], first[a]))
    return VoteStats(n=len(answers), candidates=tuple(ordered), counts=tuple(counter[a] for a in ordered))


def majority_vote(answers: Sequence[str | None]) -> tuple[str | None, float]:
    """TTRL's ``_majority_vote``: the most frequent parsable answer and its share of all ``n`` rollouts."""
    s = vote_stats(answers)
    return s.majority, (s.majority_count / s.n)


def gaussian_shape(f: float, k: float, sigma: float) -> float:
    """``g(f) = exp(−(f − k)² / (2σ²))`` (σ > 0)."""
    if sigma <= 0:
        raise ValueError(f"gaussian_shape: sigma must be > 0, got {sigma}")
    return math.exp(-((f - k) ** 2) / (2.0 * sigma**2))


def pseudo_label_weights(shares: Sequence[float], k: float, sigma: float) -> list[float]:
    """RESTRAIN's normalised candidate weights ``w_j = g(f_j) / Σ_l g(f_l)``.

    Computed in log space (a softmax of ``−(f_j − k)² / (2σ²)``), so small σ does not underflow. ``σ = 0``
    is the limit: all weight on the candidate(s) whose share is closest to ``k``, split evenly on a tie; with
    ``k = 1`` that is the majority answer, i.e. TTRL's pseudo-label.
    """
    if not shares:
        return []
    if sigma < 0:
        raise ValueError(f"pseudo_label_weights: sigma must be >= 0, got {sigma}")
    dist = [(f - k) ** 2 for f in shares]
    if sigma == 0:
        best = min(dist)
        hits = [abs(d - best) <= 1e-12 for d in dist]
        return [1.0 / sum(hits) if h else 0.0 for h in hits]
    logits = [-d / (2.0 * sigma**2) for d in dist]
    top = max(logits)
    exps = [math.exp(v - top) for v in logits]
    total = sum(exps)
    return [e / total for e in exps]
