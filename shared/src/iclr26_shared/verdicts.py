"""Combine one claim measured over several seeds into a verdict with a 95% interval.

For seeds ``i = 1..n`` a claim gives ``gain_i = sign · (ours_i − reference_i)`` (see
:class:`~iclr26_shared.spec.Claim`; the reference is the baseline measured in the same seed's run, or the
fixed threshold), so the comparison is *paired*: both sides share the seed's data split and
initialisation. The interval is the two-sided Student-t interval over the paired gains,

    mean(gain) ± t_{0.975, n−1} · sd(gain) / √n,

and the verdict is

* ``holds`` — the whole interval lies strictly above the claim's margin (lower end > margin; a tie,
  even with zero spread, does not hold);
* ``fails`` — the whole interval lies at or below the margin;
* ``inconclusive`` — the interval straddles the margin (the gap is inside seed noise) or fewer than two
  seeds were measured.

Before the interval, the chance guard (:meth:`Claim.chance_verdict`) judges each side's mean against the
trivial answer's level: ours worse than it fails, ours at it fails against a working baseline, and a
baseline at or below it leaves a relative claim inconclusive.

With one seed the single-run verdict of :attr:`Claim.verdict` is kept and the row is marked single-seed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from iclr26_shared.spec import Better, Claim, Verdict

__all__ = ["CONFIDENCE", "ClaimSummary", "summarize_claim", "summarize_seeds", "t_interval"]

#: Two-sided confidence level of the intervals.
CONFIDENCE = 0.95


def t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Student-t interval of the mean of ``values`` (``(v, v)`` for one value or zero spread)."""
    n = len(values)
    if n == 0:
        raise ValueError("t_interval needs at least one value")
    mean = statistics.fmean(values)
    if n == 1:
        return mean, mean
    sd = statistics.stdev(values)
    if sd == 0.0:
        return mean, mean
    from scipy.stats import t as student_t

    half = float(student_t.ppf(0.5 + confidence / 2, df=n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return math.nan, math.nan
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


@dataclass(frozen=True)
class ClaimSummary:
    """One claim over ``n`` seeds.

    Attributes:
        claim, metric, paper, better, margin, timing: As in :class:`Claim`.
        absolute: True for a threshold claim (the reference is fixed).
        seeds: The seeds whose runs measured the claim (NaN seeds included, see ``n``).
        ours: Our value per seed.
        reference: The baseline (or threshold) per seed.
        n: Seeds with both sides measured (finite).
        ours_mean, ours_std, ref_mean, ref_std: Over those seeds.
        gain_mean: Mean paired gain (positive = ours on the better side).
        gain_low, gain_high: 95% t-interval of the mean gain.
        verdict: ``holds`` / ``fails`` / ``inconclusive`` (see the module docs).
        single_seed: Only one seed was measured: the verdict is a single run's.
        note: Why a verdict is inconclusive when it is not the interval (at chance, too few seeds).
    """

    claim: str
    metric: str
    paper: str
    better: Better
    margin: float
    timing: bool
    absolute: bool
    seeds: list[int]
    ours: list[float]
    reference: list[float]
    n: int
    ours_mean: float
    ours_std: float
    ref_mean: float
    ref_std: float
    gain_mean: float
    gain_low: float
    gain_high: float
    verdict: Verdict
    single_seed: bool
    note: str = ""
    interval: str = field(default="t")

    def to_dict(self) -> dict[str, Any]:
        """JSON form (report.json)."""
        import dataclasses

        return dataclasses.asdict(self)


def summarize_claim(claims: Sequence[Claim], seeds: Sequence[int]) -> ClaimSummary:
    """Combine the same claim measured in the runs of ``seeds`` (one :class:`Claim` per seed)."""
    if not claims or len(claims) != len(seeds):
        raise ValueError("summarize_claim needs one Claim per seed")
    first = claims[0]
    pairs = [
        (c.ours, c.reference)
        for c in claims
        if c.ours is not None and math.isfinite(c.ours) and math.isfinite(c.reference)
    ]
    ours = [p[0] for p in pairs]
    ref = [p[1] for p in pairs]
    gains = [first.sign * (o - r) for o, r in pairs]
    n = len(pairs)
    ours_mean, ours_std = _mean_std(ours)
    ref_mean, ref_std = _mean_std(ref)
    chances = [c.chance for c in claims if c.chance is not None and math.isfinite(c.chance)]
    chance = statistics.fmean(chances) if chances else None  # the chance level may differ per seed (split)
    note = ""
    if n == 0:
        low = high = mean = math.nan
        verdict: Verdict = "inconclusive"
        note = "not measured"
    else:
        mean = statistics.fmean(gains)
        low, high = t_interval(gains)
        if len(claims) == 1:
            verdict = first.verdict
        elif n < 2:
            verdict = "inconclusive"
            note = f"only {n} of {len(claims)} seeds measured"
        elif first.timing and any(c.loaded for c in claims):
            verdict = "inconclusive"
            loaded = [s for s, c in zip(seeds, claims, strict=True) if c.loaded]
            note = f"timing claim measured while other processes shared the CPUs (seed {', '.join(map(str, loaded))})"
        elif (guard := first.chance_verdict(ours_mean, ref_mean, chance)) is not None:
            verdict, note = guard
        elif low > first.margin:
            verdict = "holds"
        elif high <= first.margin:
            verdict = "fails"
        else:
            verdict = "inconclusive"
            note = "interval straddles the margin"
    return ClaimSummary(
        claim=first.claim,
        metric=first.metric,
        paper=first.paper,
        better=first.better,
        margin=first.margin,
        timing=first.timing,
        absolute=first.threshold is not None,
        seeds=list(seeds),
        ours=[c.ours for c in claims],
        reference=[c.reference for c in claims],
        n=n,
        ours_mean=ours_mean,
        ours_std=ours_std,
        ref_mean=ref_mean,
        ref_std=ref_std,
        gain_mean=mean,
        gain_low=low,
        gain_high=high,
        verdict=verdict,
        single_seed=len(claims) == 1,
        note=note,
    )


def summarize_seeds(per_seed: Sequence[tuple[int, Sequence[Claim]]]) -> list[ClaimSummary]:
    """Group the claims of several runs (``[(seed, claims), ...]``) by (claim, metric), in first-seen order,
    and summarise each; a claim missing from some seeds is summarised over the seeds that have it."""
    order: list[tuple[str, str]] = []
    groups: dict[tuple[str, str], list[tuple[int, Claim]]] = {}
    for seed, claims in per_seed:
        for c in claims:
            key = (c.claim, c.metric)
            if key not in groups:
                order.append(key)
                groups[key] = []
            groups[key].append((seed, c))
    return [summarize_claim([c for _, c in groups[k]], [s for s, _ in groups[k]]) for k in order]
