"""The claims of ``richness`` on constructed results: they hold when the effects are there, and none holds on
chance-level / no-effect results (both regimes equal, no drop, test accuracy at chance)."""

from __future__ import annotations

import math
from typing import Any

from iclr26_theory_metrics.methods.richness.claims import claims, report


def _row(step: int, train_acc: float, test_acc: float, d_lr: float) -> dict[str, Any]:
    return {
        "step": step,
        "train_acc": train_acc,
        "test_acc": test_acc,
        "train_loss": 0.1,
        "test_loss": 1.0,
        "d_lr": d_lr,
        "d_lr_test": d_lr,
        "kernel_distance": 0.5,
        "param_norm": 10.0,
        "nc1": 0.1,
    }


def _results(*, effect: bool) -> dict[str, Any]:
    chance = 1 / 23
    if effect:
        rows = [
            _row(0, 0.04, 0.04, 0.4),
            _row(100, 1.0, 0.3, 0.5),
            _row(200, 1.0, 0.95, 0.1),
            _row(300, 1.0, 0.99, 0.08),
        ]
        mem, grok = rows[1], rows[2]
        control = {"rich": {"d_lr": 0.03, "train_acc": 1.0}, "lazy": {"d_lr": 0.7, "train_acc": 0.6}}
        lazy, rich = 0.6, 0.05
        corr = -0.95
        spread = {"d_lr": 0.05, "kernel_distance": 0.4, "param_norm": 0.6, "nc1": 1.2}
        bn_with, bn_without = 0.07, 0.66
    else:  # nothing learned beyond memorisation: test at chance, D_LR flat, regimes equal
        rows = [_row(0, chance, chance, 0.4), _row(100, 1.0, chance, 0.4), _row(200, 1.0, chance, 0.4)]
        mem, grok = rows[1], None
        control = {"rich": {"d_lr": 0.5, "train_acc": 1.0}, "lazy": {"d_lr": 0.5, "train_acc": 1.0}}
        lazy = rich = 0.4
        corr = math.nan
        spread = {"d_lr": 0.3, "kernel_distance": 0.3, "param_norm": 0.3, "nc1": 0.3}
        bn_with = bn_without = 0.5
    curve = {k: [r[k] for r in rows] for k in rows[0]}
    final = {"train_acc": 1.0, "test_acc": 0.9, "d_lr": 0.1, "d_lr_test": 0.1, "kernel_distance": 0.5}
    bn_final = {**final, "nc1": 1.0, "param_norm": 1.0}
    return {
        "batch_norm": {
            "dataset": "digits",
            "feature_dim": 16,
            "epochs": 2,
            "chance": 0.1,
            "with": {"final": {**bn_final, "d_lr": bn_with}},
            "without": {"final": {**bn_final, "d_lr": bn_without, "test_acc": 0.5 if effect else 0.1}},
        },
        "control": {"n": 100, "p": 64, "classes": 10, "lazy_expected": 1 - math.sqrt(10 / 64), **control},
        "grokking": {
            "modulus": 23,
            "n_train": 264,
            "n_test": 265,
            "steps": rows[-1]["step"],
            "grok_accuracy": 0.9,
            "chance": chance,
            "seconds": 1.0,
            "init": rows[0],
            "memorised": mem,
            "grokked": grok,
            "final": rows[-1],
            "largest_drop_after_memorisation": None,
            "corr_d_lr_test_acc_after_memorisation": corr,
            "curve": curve,
        },
        "lazy_rich": {
            "dataset": "digits",
            "n_train": 1438,
            "n_test": 359,
            "feature_dim": 128,
            "num_classes": 10,
            "chance": 0.1,
            "lazy": {"final": {**final, "nc1": 1.0, "param_norm": 1.0, "d_lr": lazy, "d_lr_test": lazy}},
            "rich": {"final": {**final, "nc1": 1.0, "param_norm": 1.0, "d_lr": rich, "d_lr_test": rich}},
            "stress": {
                "runs": [
                    {"label": "rich (wd 0, α 1)", "final": {**final, "nc1": 1.0, "param_norm": 1.0}},
                    {"label": "rich (wd 0.005, α 1)", "final": {**final, "nc1": 2.0, "param_norm": 0.5}},
                ],
                "spread": spread,
            },
        },
    }


def test_claims_hold_when_the_effects_are_there() -> None:
    cs = claims(_results(effect=True))
    assert len(cs) == 11
    assert [c.verdict for c in cs] == ["holds"] * 11, [(c.claim, c.verdict) for c in cs]
    text = report(_results(effect=True))
    assert "## Grokking" in text and "## Lazy vs rich" in text and "## Controlled check" in text
    assert "## Stress test" in text and "## Batch norm" in text


def test_no_claim_holds_without_an_effect() -> None:
    cs = claims(_results(effect=False))
    assert len(cs) == 11
    assert not [c.claim for c in cs if c.verdict == "holds" and "train accuracy is already" not in c.claim]
    # the train-accuracy condition is a precondition, not an effect: at chance it must fail too
    res = _results(effect=False)
    res["grokking"]["final"] = {**res["grokking"]["final"], "train_acc": 1 / 23}
    assert all(c.verdict != "holds" for c in claims(res))


def test_never_grokked_compares_the_last_step() -> None:
    res = _results(effect=False)
    (c,) = [c for c in claims(res) if "at least halves" in c.claim]
    assert c.ours == math.log10(res["grokking"]["final"]["d_lr"]) and c.verdict == "fails"
    text = report(res)
    assert "—" in text  # the missing grokking row
    assert "Never reached the grokking level" in text and "last step (200)" in text


def test_claim_texts_do_not_vary_with_the_runs() -> None:
    """`--seeds N` groups claims by their text: the steps of memorisation and grokking, whether the run grokked and
    which baseline is the most stable differ between seeds and stay out of it."""
    a, b = _results(effect=True), _results(effect=False)
    b["grokking"]["memorised"] = {**b["grokking"]["memorised"], "step": 150}
    b["lazy_rich"]["stress"]["spread"] = {"d_lr": 0.3, "kernel_distance": 0.5, "param_norm": 0.2, "nc1": 0.9}
    assert [(c.claim, c.metric) for c in claims(a)] == [(c.claim, c.metric) for c in claims(b)]


def test_stress_compares_with_the_most_stable_baseline() -> None:
    res = _results(effect=True)
    res["lazy_rich"]["stress"]["spread"] = {"d_lr": 0.05, "kernel_distance": 0.1, "param_norm": math.nan, "nc1": 2.0}
    (c,) = [c for c in claims(res) if c.claim.startswith("Stress test")]
    assert c.baseline == 0.1 and c.verdict == "fails"  # 0.05 short of margin 0.1
    assert "Most stable baseline (the stress claim's reference): kernel_distance." in report(res)


def test_sections_absent_give_no_claims() -> None:
    assert claims({"control": None, "grokking": None, "lazy_rich": None}) == []
