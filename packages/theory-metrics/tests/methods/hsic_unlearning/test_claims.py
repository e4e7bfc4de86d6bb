"""The claims of ``hsic-unlearning`` on constructed results: all hold when the effects are there, none holds on
chance-level results (F1 0.5, OTR equal, MIA not fooled)."""

from __future__ import annotations

from typing import Any

from iclr26_theory_metrics.methods.hsic_unlearning.claims import claims, report


def _model(otr: float, mia: float) -> dict[str, float]:
    return {
        "acc_retain": 1.0,
        "acc_forget": 0.9,
        "acc_test": 0.88,
        "mia_acc": mia,
        "mia_member_rate": 0.5,
        "otr": otr,
        "mean_jsd_it": 0.2,
        "mean_jsd_oot": 0.1,
    }


def _results(*, effect: bool) -> dict[str, Any]:
    f1s = (0.7, 0.85, 0.95) if effect else (0.5, 0.5, 0.5)
    f1 = [
        {
            "size": s,
            "f1": f,
            "accuracy": f,
            "f1_mmd": 0.6 if effect else 0.5,
            "mean_jsd_gap_in": 0.0,
            "mean_jsd_gap_out": 0.0,
        }
        for s, f in zip((100, 200, 400), f1s, strict=True)
    ]
    return {
        "dataset": "fashion-mnist",
        "model": "mlp",
        "n_train": 10000,
        "n_forget": 1000,
        "n_retain": 9000,
        "n_test": 2000,
        "forget": "random",
        "subset_size": 400,
        "n_targets": 20,
        "seconds": 1.0,
        "models": {
            "original": _model(0.1, 0.6),
            "retrain": _model(0.9 if effect else 0.5, 0.5),
            "mia-fool": _model(0.1 if effect else 0.5, 0.51 if effect else 0.7),
        },
        "f1_retrain": f1,
        "mia_at_chance": {"mia-fool": {**f1[-1], "f1": 0.9 if effect else 0.5, "mia_acc": 0.51}},
        "control": {"size": 100, "f1": 1.0 if effect else 0.5, "f1_mmd": 1.0, "noise_in": 0.25},
    }


def test_claims_hold_when_the_effects_are_there() -> None:
    cs = claims(_results(effect=True))
    assert len(cs) == 8
    assert [c.verdict for c in cs] == ["holds"] * 8, [(c.claim, c.verdict) for c in cs]
    text = report(_results(effect=True))
    assert "## Unlearning" in text and "## Discrimination" in text and "## Controlled check" in text


def test_no_claim_holds_at_chance() -> None:
    cs = claims(_results(effect=False))
    assert len(cs) == 8
    assert not [c.claim for c in cs if c.verdict == "holds"]


def test_claim_texts_do_not_depend_on_measured_numbers() -> None:
    a, b = claims(_results(effect=True)), claims(_results(effect=False))
    assert [c.claim for c in a] == [c.claim for c in b] and [c.metric for c in a] == [c.metric for c in b]


def test_sections_absent_give_no_claims() -> None:
    assert claims({}) == [] and report({}) == ""
