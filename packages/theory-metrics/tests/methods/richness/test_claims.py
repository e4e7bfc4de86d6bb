"""The claims of ``richness`` on constructed results: they hold when the effects are there, and none holds on
chance-level / no-effect results (both regimes equal, no drop, test accuracy at chance)."""

from __future__ import annotations

import math
from typing import Any

import pytest

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
        "control": {"n": 100, "p": 64, "classes": 10, "lazy_expected": 1 - math.sqrt(9 / 64), **control},
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
    res["grokking"]["curve"]["train_acc"][-1] = 1 / 23
    assert all(c.verdict != "holds" for c in claims(res))
    for window in (2, 3):  # a window over the end of training does not make a no-effect run pass either
        res["grokking"]["final_window"] = window
        assert all(c.verdict != "holds" for c in claims(res))


def test_never_grokked_compares_the_last_step() -> None:
    res = _results(effect=False)
    (c,) = [c for c in claims(res) if "at least halves" in c.claim]
    assert c.ours == math.log10(res["grokking"]["final"]["d_lr"]) and c.verdict == "fails"
    text = report(res)
    assert "—" in text  # the missing grokking row
    assert "Never reached the grokking level" in text and "use the end of training (final)" in text


def _spiky(window: int) -> dict[str, Any]:
    """The effect results with two more evaluations after grokking, the last one a loss spike."""
    res = _results(effect=True)
    g = res["grokking"]
    rows = [_row(0, 0.04, 0.04, 0.4), _row(100, 1.0, 0.3, 0.5), _row(200, 1.0, 0.95, 0.1), _row(300, 1.0, 0.99, 0.08)]
    rows += [_row(400, 1.0, 0.98, 0.09), _row(500, 0.6, 0.4, 0.6)]  # the spike at the last evaluation
    g.update(curve={k: [r[k] for r in rows] for k in rows[0]}, final=rows[-1], steps=500, final_window=window)
    return res


def test_final_window_reads_the_end_of_training_as_a_median() -> None:
    """One loss spike at the last evaluation decides "groks" and "delayed" with window 1 (the last evaluation);
    the median of the last 3 evaluations reads through it, and the texts say which reading the claims use."""
    last = {c.claim: c for c in claims(_spiky(1))}
    median = {c.claim: c for c in claims(_spiky(3))}
    groks = next(k for k in last if "the transformer groks" in k)
    delayed = next(k for k in last if "generalisation is delayed" in k)
    assert last[groks].ours == 0.4 and last[groks].verdict == "fails"
    assert last[delayed].verdict != "holds"  # 0.3 vs 0.4: not 0.2 apart
    assert median[groks].ours == 0.98 and median[groks].verdict == "holds"  # median of 0.99, 0.98, 0.4
    assert median[delayed].baseline == 0.98 and median[delayed].verdict == "holds"
    assert last[groks].metric == "final test accuracy"
    assert median[groks].metric == "final (median of the last 3 evaluations) test accuracy"
    text = report(_spiky(3))
    row = next(line for line in text.splitlines() if line.startswith("| median of the last 3 "))
    assert [c.strip() for c in row.strip("|").split("|")][:2] == ["median of the last 3", "300"]
    assert "from step 300; `final_window`" in text


def test_final_window_of_one_is_the_last_row() -> None:
    res = _results(effect=True)
    assert [c.ours for c in claims(res)] == [
        c.ours for c in claims({**res, "grokking": {**res["grokking"], "final_window": 1}})
    ]


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


def test_degenerate_results_make_no_claim_hold() -> None:
    """The shared degenerate cases (every compared arm equal, at the trivial level, ours worse) and the method's own:
    D_LR flat through training (nothing changes from memorisation to grokking), lazy training as rich as rich
    training, batch norm doing nothing, and the planted control at the random-feature level."""
    import copy

    from iclr26_shared.testing import Arms, assert_no_claim_holds

    res = _results(effect=True)
    lazy_level = res["control"]["lazy_expected"]
    d_lr = Arms(
        ours=[
            "control/rich/d_lr",
            "grokking/grokked/d_lr",
            "lazy_rich/rich/final/d_lr",
            "lazy_rich/rich/final/d_lr_test",
            "batch_norm/with/final/d_lr",
        ],
        others=[
            "control/lazy/d_lr",
            "grokking/memorised/d_lr",
            "lazy_rich/lazy/final/d_lr",
            "lazy_rich/lazy/final/d_lr_test",
            "batch_norm/without/final/d_lr",
        ],
        trivial=lazy_level,
        worse=1.0,
    )
    spread = Arms(
        ours=["lazy_rich/stress/spread/d_lr"],
        others=[f"lazy_rich/stress/spread/{k}" for k in ("kernel_distance", "param_norm", "nc1")],
        trivial=0.3,
        worse=2.0,
    )
    test_acc = Arms(
        ours=["grokking/curve/test_acc", "batch_norm/without/final/test_acc"],
        others=[],
        trivial=res["grokking"]["chance"],
        worse=0.0,
    )
    flat = copy.deepcopy(res)
    g = flat["grokking"]
    g["curve"]["d_lr"] = [0.4] * len(g["curve"]["d_lr"])
    g["grokked"] = {**g["grokked"], "d_lr": 0.4}
    g["memorised"] = {**g["memorised"], "d_lr": 0.4}
    g["corr_d_lr_test_acc_after_memorisation"] = math.nan  # D_LR constant: no correlation
    lazy_as_rich = copy.deepcopy(res)
    lazy_as_rich["lazy_rich"]["lazy"] = copy.deepcopy(res["lazy_rich"]["rich"])
    bn_nothing = copy.deepcopy(res)
    bn_nothing["batch_norm"]["with"] = copy.deepcopy(res["batch_norm"]["without"])
    control_random = copy.deepcopy(res)
    control_random["control"]["rich"] = copy.deepcopy(res["control"]["lazy"])
    assert_no_claim_holds(
        claims,
        res,
        [d_lr, spread, test_acc],
        extra_cases={
            "D_LR flat through training": flat,
            "lazy as rich as rich": lazy_as_rich,
            "batch norm does nothing": bn_nothing,
            "planted control at the random level": control_random,
        },
    )


def test_control_lazy_level_is_that_of_the_centred_rank() -> None:
    """The planted lazy set's read-out has an intercept, so its outputs have centred rank C − 1 and isotropic random
    features land on 1 − √((C−1)/p) (0.7348 at C = 10, p = 128), not 1 − √(C/p) (0.7205)."""
    from iclr26_theory_metrics.methods.richness.config import RichnessConfig
    from iclr26_theory_metrics.methods.richness.train import control_study

    out = control_study(RichnessConfig(control_n=20000), seed=0)
    assert out["lazy_expected"] == pytest.approx(1 - math.sqrt(9 / 128), rel=1e-12)
    assert out["lazy"]["d_lr"] == pytest.approx(out["lazy_expected"], abs=0.004)
    assert abs(out["lazy"]["d_lr"] - (1 - math.sqrt(10 / 128))) > 0.01
