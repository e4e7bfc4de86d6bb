"""The claims cannot pass vacuously: chance-level results give no "holds"; clear wins do hold."""

import re
from typing import Any

import pytest

from iclr26_federated.methods.fedopenmatch.claims import MARGIN, chance_band, chance_levels, claims, report
from iclr26_federated.methods.fedopenmatch.config import VARIANTS

K = 6


def _stats(open_bacc: float, closed_acc: float) -> dict[str, Any]:
    s: dict[str, Any] = {"n_seeds": 1}
    for m, v in (("open_bacc", open_bacc), ("closed_acc", closed_acc), ("unknown_recall", 1.0), ("known_recall", 0.0)):
        s |= {f"{m}_mean": v, f"{m}_std": 0.0, m: [v]}
    return s


def _results(per_variant: dict[str, tuple[float, float]]) -> dict[str, Any]:
    return {"variants": {v: _stats(*per_variant[v]) for v in VARIANTS}, "known_classes": K, "test_class_counts": COUNTS}


COUNTS = [100] * K + [400]  # the quick preset's test set: 100 images per known digit, 400 unknown
TRIVIAL = (1 / (K + 1), 1 / K)  # an input-independent prediction: open-set bal. acc 1/(K+1), closed 1/K
# 2 binomial SE of the trivial level, by hand: open (1/7)·sqrt((1/7)(6/7)·(6/100 + 1/400)) = 0.012497,
# closed sqrt((1/6)(5/6)/600) = 0.015215
BAND = (2 * 0.0124973, 2 * 0.0152145)


def test_chance_band_is_two_binomial_standard_errors_of_the_trivial_level() -> None:
    res = _results({v: (0.8, 0.9) for v in VARIANTS})
    band = chance_band(res)
    assert band["open_bacc"] == pytest.approx((1 / 7, 0.0124973), abs=1e-6)
    assert band["closed_acc"] == pytest.approx((1 / 6, 0.0152145), abs=1e-6)
    assert chance_levels(res) == pytest.approx({"open_bacc": 0.167852, "closed_acc": 0.197096}, abs=1e-5)
    # an unbalanced test set (K = 2): 50 and 150 known images, 40 unknown. Open: p = 1/3,
    # SE = (1/3)·sqrt((2/9)·(1/50 + 1/150 + 1/40)) = 0.035717; closed: p = 150/200 = 0.75,
    # SE = sqrt(0.75·0.25/200) = 0.030619
    small = {"variants": {}, "known_classes": 2, "test_class_counts": [50, 150, 40]}
    assert chance_band(small)["open_bacc"] == pytest.approx((1 / 3, 0.035717), abs=1e-6)
    assert chance_band(small)["closed_acc"] == pytest.approx((0.75, 0.030619), abs=1e-6)
    # fewer test images, wider band
    res["test_class_counts"] = [25] * K + [100]
    assert chance_band(res)["open_bacc"][1] == pytest.approx(2 * 0.0124973, abs=1e-6)


def test_chance_level_results_hold_no_claim() -> None:
    # every baseline predicts "unknown" for all (open 1/(K+1)) and one class (closed 1/K): the smoke run's case
    chance = {v: TRIVIAL for v in VARIANTS}
    # ours a hair above the others but inside the chance tolerance: it learned nothing, so every claim fails
    chance["fedopenmatch"] = (TRIVIAL[0] + BAND[0] / 2, TRIVIAL[1] + BAND[1] / 2)
    out = claims(_results(chance))
    assert len(out) == 4
    assert [c.verdict for c in out] == ["fails"] * 4, [(c.claim, c.verdict) for c in out]
    # ours clears chance by more than the tolerance, every baseline at the trivial answer: a win over a
    # baseline that learned nothing shows nothing (the paper's OpenMatch at 1.74), so inconclusive
    chance["fedopenmatch"] = (TRIVIAL[0] + 2 * BAND[0], TRIVIAL[1] + 2 * BAND[1])
    out = claims(_results(chance))
    assert [c.verdict for c in out] == ["inconclusive"] * 4, [(c.claim, c.verdict) for c in out]


def test_ours_must_clear_the_chance_band_even_against_a_baseline_just_above_it() -> None:
    # the issue-40 case: the baseline a hair above chance, ours inside the band (> baseline + margin): no win
    res = {v: (TRIVIAL[0] + 0.002, TRIVIAL[1] + 0.002) for v in VARIANTS}
    res["fedopenmatch"] = (TRIVIAL[0] + BAND[0] - 0.001, TRIVIAL[1] + BAND[1] - 0.001)
    assert res["fedopenmatch"][0] - res["fedavg-openmatch"][0] > MARGIN
    verdicts = [c.verdict for c in claims(_results(res))]
    assert verdicts == ["fails"] * 4
    # ours clears the tolerance but the baselines sit inside it: inconclusive, not a win
    res["fedopenmatch"] = (TRIVIAL[0] + BAND[0] + 0.01, TRIVIAL[1] + BAND[1] + 0.01)
    assert [c.verdict for c in claims(_results(res))] == ["inconclusive"] * 4


def test_missing_known_classes_or_test_counts_is_an_error() -> None:
    res = _results({v: (0.8, 0.9) for v in VARIANTS})
    for key, bad in (("known_classes", None), ("known_classes", "6"), ("known_classes", 1), ("known_classes", True)):
        broken = {k: v for k, v in res.items() if k != key}
        if bad is not None:
            broken[key] = bad
        with pytest.raises(ValueError, match=key):
            claims(broken)
    for bad in (None, [100] * K, [100] * K + [0], [100.0] * (K + 1), "1000"):
        broken = {k: v for k, v in res.items() if k != "test_class_counts"}
        if bad is not None:
            broken["test_class_counts"] = bad
        with pytest.raises(ValueError, match="test_class_counts"):
            claims(broken)


def test_closed_set_chance_is_the_measured_majority_share() -> None:
    res = _results({v: (0.8, 0.30) for v in VARIANTS})
    res["variants"]["fedopenmatch"] = _stats(0.8, 0.34)
    (closed,) = [c for c in claims(res) if "closed-set" in c.claim]
    assert closed.chance == pytest.approx(1 / K + BAND[1], abs=1e-6) and closed.verdict == "holds"
    # a test set whose majority class is 29 % of the 600 known images: p + 2·sqrt(0.29·0.71/600)
    res["test_class_counts"] = [174, 85, 85, 85, 85, 86, 400]
    (closed,) = [c for c in claims(res) if "closed-set" in c.claim]
    assert closed.chance == pytest.approx(0.29 + 2 * 0.0185247, abs=1e-6)
    assert closed.verdict == "inconclusive"  # the baseline (0.30) is inside the band


def test_clear_wins_hold_and_the_best_baseline_decides() -> None:
    res = {v: (0.5, 0.6) for v in VARIANTS}
    res["fedopenmatch"] = (0.7, 0.8)
    res["fedavg-fixmatch"] = (0.75, 0.9)  # the best FedAvg baseline beats ours: the claim fails
    out = {c.claim.split(" (")[0]: c for c in claims(_results(res))}
    best = next(c for name, c in out.items() if name.startswith("FedOpenMatch has higher open-set"))
    assert best.baseline == pytest.approx(0.75) and best.verdict == "fails"
    assert [c.verdict for c in out.values() if "adds to" in c.claim] == ["holds"] * 2
    closed = next(c for c in out.values() if "closed-set" in c.claim)
    assert closed.verdict == "holds" and closed.better == "higher"


def test_a_tie_or_a_gap_below_the_margin_is_not_a_win() -> None:
    res = {v: (0.8, 0.9) for v in VARIANTS}
    res["no-lcr"] = (0.8 - MARGIN / 2, 0.9)  # ours wins by less than the margin
    verdicts = {c.claim.split(" (")[0]: c.verdict for c in claims(_results(res))}
    assert set(verdicts.values()) == {"fails"}, verdicts


def test_missing_variants_leave_claims_out_and_report_renders() -> None:
    res = _results({v: (0.5, 0.6) for v in VARIANTS})
    res["variants"] = {k: res["variants"][k] for k in ("fedopenmatch", "labeled-only")}
    res |= {"engine": "inline", "seconds_per_round": 0.1, "failures": []}
    (only,) = claims(res)
    assert "labeled-only" in only.claim
    assert "| fedopenmatch | 0.5000 ± 0.0000" in re.sub(" +", " ", report(res))


def test_report_has_the_per_round_pseudo_label_table() -> None:
    res = _results({v: (0.5, 0.6) for v in VARIANTS})
    hist = [{"round": 0}, {"round": 1, "pl_pass_rate": 0.25, "pl_precision": 0.9}]
    hist2 = [{"round": 0}, {"round": 1, "pl_pass_rate": 0.0, "pl_precision": None}]
    res["jobs"] = [{"variant": "fedopenmatch", "history": hist}, {"variant": "fedopenmatch", "history": hist2}]
    text = report(res)
    assert "| variant      | round 1     |" in text and "| fedopenmatch | 0.12 / 0.90 |" in text


def test_claim_texts_do_not_depend_on_the_numbers() -> None:
    """Replicated runs group a claim over seeds by (claim, metric): both must be the same in every run."""
    a = claims(_results({v: (0.5, 0.6) for v in VARIANTS}))
    other = {v: (0.7, 0.8) for v in VARIANTS}
    other["fedavg-fixmatch"] = (0.9, 0.9)  # another best baseline
    b = claims(_results(other))
    assert [(c.claim, c.metric) for c in a] == [(c.claim, c.metric) for c in b]


def test_la_is_a_diagnostic_in_the_report_not_a_claim() -> None:
    res = _results({v: (0.8, 0.9) for v in VARIANTS})
    res["variants"]["no-la"] = _stats(0.79, 0.9)
    res |= {"engine": "inline", "seconds_per_round": 0.1, "failures": []}
    assert not [c for c in claims(res) if "LA" in c.claim]
    text = re.sub(" +", " ", report(res))
    assert "## LA ablation (diagnostic, not a claim)" in text and "| open_bacc | 0.8000 | 0.7900 | +0.0100 |" in text
