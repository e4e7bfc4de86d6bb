"""Claims over seeds: paired t-intervals and the three-way verdict."""

import math

import pytest
from scipy import stats

from iclr26_shared.spec import Claim
from iclr26_shared.verdicts import summarize_claim, summarize_seeds, t_interval


def _claims(ours: list[float], base: list[float], **kw) -> list[Claim]:
    return [Claim("c", "acc", o, baseline=b, **kw) for o, b in zip(ours, base, strict=True)]


def test_t_interval_matches_scipy() -> None:
    values = [0.3, -0.1, 0.25, 0.05, 0.4]
    ours = t_interval(values)
    ref = stats.t.interval(0.95, len(values) - 1, loc=stats.tmean(values), scale=stats.sem(values))
    assert ours == pytest.approx(ref, rel=1e-12)
    assert t_interval([2.0]) == (2.0, 2.0) and t_interval([1.0, 1.0, 1.0]) == (1.0, 1.0)


def test_clear_win_holds_clear_loss_fails_noisy_tie_is_inconclusive() -> None:
    win = summarize_claim(_claims([0.91, 0.93, 0.92], [0.80, 0.81, 0.79]), [0, 1, 2])
    assert win.verdict == "holds" and win.gain_low > 0 and win.n == 3 and not win.single_seed
    loss = summarize_claim(_claims([0.70, 0.71, 0.69], [0.80, 0.81, 0.79]), [0, 1, 2])
    assert loss.verdict == "fails" and loss.gain_high < 0
    tie = summarize_claim(_claims([0.82, 0.78, 0.81], [0.80, 0.81, 0.79]), [0, 1, 2])
    assert tie.verdict == "inconclusive" and tie.gain_low < 0 < tie.gain_high
    assert "straddles" in tie.note


def test_direction_margin_and_thresholds() -> None:
    lower = [Claim("c", "mse", o, baseline=b, better="lower") for o, b in [(1.0, 2.0), (1.1, 2.1), (0.9, 2.05)]]
    assert summarize_claim(lower, [0, 1, 2]).verdict == "holds"
    margin = _claims([0.91, 0.93, 0.92], [0.80, 0.81, 0.79], margin=0.5)
    assert summarize_claim(margin, [0, 1, 2]).verdict == "fails"
    bound = [Claim("c", "err", e, threshold=1e-4, better="lower") for e in (1e-7, 2e-7, 0.0)]
    s = summarize_claim(bound, [0, 1, 2])
    assert s.verdict == "holds" and s.absolute


def test_both_at_chance_is_inconclusive_single_and_multi_seed() -> None:
    single = Claim("c", "acc", 0.12, baseline=0.12, chance=0.12)
    assert single.verdict == "inconclusive"
    multi = _claims([0.12, 0.12, 0.12], [0.12, 0.12, 0.12], chance=0.12)
    s = summarize_claim(multi, [0, 1, 2])
    assert s.verdict == "inconclusive" and s.note == "both sides at chance"


def test_each_side_is_judged_against_the_trivial_answer() -> None:
    # a baseline at or below chance does not work: a win over it is not evidence (FedOpenMatch vs an
    # all-"unknown" OpenMatch), single run and over seeds
    assert Claim("c", "acc", 0.5, baseline=0.10, chance=0.12).verdict == "inconclusive"
    assert Claim("c", "acc", 0.5, baseline=0.12, chance=0.12).verdict == "inconclusive"
    s = summarize_claim(_claims([0.5, 0.52, 0.51], [0.12, 0.12, 0.12], chance=0.12), [0, 1, 2])
    assert s.verdict == "inconclusive" and s.note == "the baseline is no better than chance"
    # ours worse than the trivial answer is a failure, whatever the baseline did
    assert Claim("c", "acc", 0.11, baseline=0.10, chance=0.12).verdict == "fails"
    assert Claim("c", "acc", 0.05, baseline=0.12, chance=0.12).verdict == "fails"
    s = summarize_claim(_claims([0.11, 0.115, 0.112], [0.10, 0.101, 0.099], chance=0.12), [0, 1, 2])
    assert s.verdict == "fails" and "worse than the trivial answer" in s.note
    # ours at chance cannot hold, not even as non-inferiority against a working baseline
    assert Claim("c", "acc", 0.12, baseline=0.125, chance=0.12, margin=-0.01).verdict == "fails"
    assert Claim("c", "err", 1.0, threshold=2.0, better="lower", chance=1.0).verdict == "fails"
    # lower-is-better: above the mean predictor's error is worse than chance
    assert Claim("c", "mae", 0.30, baseline=0.20, better="lower", chance=0.25).verdict == "fails"
    assert Claim("c", "mae", 0.10, baseline=0.20, better="lower", chance=0.25, margin=0.05).verdict == "holds"


def test_ties_never_hold() -> None:
    assert Claim("c", "acc", 0.8, baseline=0.8).verdict == "fails"
    assert Claim("c", "acc", 0.85, baseline=0.8, margin=0.05).verdict == "fails"
    s = summarize_claim(_claims([0.8, 0.8, 0.8], [0.8, 0.8, 0.8]), [0, 1, 2])
    assert s.verdict == "fails" and s.gain_low == s.gain_high == 0.0
    s = summarize_claim(_claims([0.75, 0.75, 0.75], [0.5, 0.5, 0.5], margin=0.25), [0, 1, 2])  # exact in binary
    assert s.verdict == "fails"
    s = summarize_claim(_claims([0.81, 0.81, 0.81], [0.8, 0.8, 0.8]), [0, 1, 2])
    assert s.verdict == "holds"


def test_single_seed_keeps_the_single_run_verdict() -> None:
    for ours, base in [(0.9, 0.8), (0.7, 0.8), (0.8, 0.8)]:
        c = Claim("c", "acc", ours, baseline=base)
        s = summarize_claim([c], [0])
        assert s.single_seed and s.verdict == c.verdict


def test_nan_seeds_are_dropped_and_unmeasured_is_inconclusive() -> None:
    s = summarize_claim(_claims([math.nan, math.nan], [0.8, 0.8]), [0, 1])
    assert s.verdict == "inconclusive" and s.n == 0
    s = summarize_claim(_claims([0.9, math.nan, 0.91, 0.92], [0.8, 0.8, 0.79, 0.8]), [0, 1, 2, 3])
    assert s.n == 3 and s.verdict == "holds"
    assert Claim("c", "acc", math.nan, baseline=0.8).verdict == "inconclusive"


def test_summarize_seeds_groups_by_claim_in_order() -> None:
    a0, b0 = Claim("a", "m", 1.0, baseline=0.0), Claim("b", "m", 0.0, baseline=1.0)
    a1, b1 = Claim("a", "m", 1.1, baseline=0.1), Claim("b", "m", 0.1, baseline=1.1)
    out = summarize_seeds([(0, [a0, b0]), (1, [a1, b1])])
    assert [s.claim for s in out] == ["a", "b"] and [s.seeds for s in out] == [[0, 1], [0, 1]]
    assert [s.verdict for s in out] == ["holds", "fails"]


def test_claim_contract_is_checked() -> None:
    with pytest.raises(ValueError, match="exactly one of baseline"):
        Claim("c", "m", 1.0)
    with pytest.raises(ValueError, match="exactly one of baseline"):
        Claim("c", "m", 1.0, baseline=0.0, threshold=1.0)
    with pytest.raises(ValueError, match="better"):
        Claim("c", "m", 1.0, baseline=0.0, better="up")  # type: ignore[arg-type]


def test_baseline_at_chance_every_seed_counts_as_chance_despite_rounding() -> None:
    chance = 0.1 + 0.2  # 0.30000000000000004: means of such values can land one ulp below
    claims = [Claim("c", "acc", chance - 1e-17, baseline=chance, chance=chance) for _ in range(3)]
    s = summarize_claim(claims, [0, 1, 2])
    assert s.verdict == "inconclusive" and "chance" in s.note
    per_seed = [Claim("c", "acc", 0.2, baseline=c, chance=c) for c in (0.19, 0.2, 0.21)]
    assert summarize_claim(per_seed, [0, 1, 2]).note == "both sides at chance"
