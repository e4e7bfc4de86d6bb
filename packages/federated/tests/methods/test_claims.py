"""The claims cannot pass vacuously: chance-level results give no "holds"; clear wins do hold."""

from typing import Any

import pytest

from iclr26_federated.methods.fedopenmatch.claims import CHANCE_TOL, MARGIN, claims, report
from iclr26_federated.methods.fedopenmatch.config import VARIANTS

K = 6


def _stats(open_bacc: float, closed_acc: float) -> dict[str, Any]:
    s: dict[str, Any] = {"n_seeds": 1}
    for m, v in (("open_bacc", open_bacc), ("closed_acc", closed_acc), ("unknown_recall", 1.0), ("known_recall", 0.0)):
        s |= {f"{m}_mean": v, f"{m}_std": 0.0, m: [v]}
    return s


def _results(per_variant: dict[str, tuple[float, float]]) -> dict[str, Any]:
    return {"variants": {v: _stats(*per_variant[v]) for v in VARIANTS}, "known_classes": K}


def test_chance_level_results_hold_no_claim() -> None:
    # every variant predicts "unknown" for all (open 1/(K+1)) and one class (closed 1/K): the smoke run's case
    chance = {v: (1 / (K + 1), 1 / K) for v in VARIANTS}
    # ours a hair above the others, still inside the chance tolerance: must not hold either
    chance["fedopenmatch"] = (1 / (K + 1) + CHANCE_TOL / 2, 1 / K + CHANCE_TOL / 2)
    out = claims(_results(chance))
    assert len(out) == 5
    assert all(c.verdict == "inconclusive" for c in out), [(c.claim, c.verdict) for c in out]


def test_clear_wins_hold_and_the_best_baseline_decides() -> None:
    res = {v: (0.5, 0.6) for v in VARIANTS}
    res["fedopenmatch"] = (0.7, 0.8)
    res["fedavg-fixmatch"] = (0.75, 0.9)  # the best FedAvg baseline beats ours: the claim fails
    out = {c.claim.split(" (")[0]: c for c in claims(_results(res))}
    best = next(c for name, c in out.items() if name.startswith("FedOpenMatch has higher open-set"))
    assert best.baseline == pytest.approx(0.75) and best.verdict == "fails"
    assert [c.verdict for c in out.values() if "adds to" in c.claim] == ["holds"] * 3
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
    assert "| fedopenmatch | 0.5000 ± 0.0000" in report(res)


def test_report_has_the_per_round_pseudo_label_table() -> None:
    res = _results({v: (0.5, 0.6) for v in VARIANTS})
    hist = [{"round": 0}, {"round": 1, "pl_pass_rate": 0.25, "pl_precision": 0.9}]
    hist2 = [{"round": 0}, {"round": 1, "pl_pass_rate": 0.0, "pl_precision": None}]
    res["jobs"] = [{"variant": "fedopenmatch", "history": hist}, {"variant": "fedopenmatch", "history": hist2}]
    text = report(res)
    assert "| variant | round 1 |" in text and "| fedopenmatch | 0.12 / 0.90 |" in text


def test_claim_texts_do_not_depend_on_the_numbers() -> None:
    """Replicated runs group a claim over seeds by (claim, metric): both must be the same in every run."""
    a = claims(_results({v: (0.5, 0.6) for v in VARIANTS}))
    other = {v: (0.7, 0.8) for v in VARIANTS}
    other["fedavg-fixmatch"] = (0.9, 0.9)  # another best baseline
    b = claims(_results(other))
    assert [(c.claim, c.metric) for c in a] == [(c.claim, c.metric) for c in b]
