"""Claims hold and fail on constructed results, and never hold on chance-level (no-effect) results; the
regression and the selections compute what they say."""

from __future__ import annotations

import math
from typing import Any

import pytest

from iclr26_theory_metrics.analysis import (
    best_by_optimizer,
    momentum_comparison,
    nc3_nc0_regression,
    value_at_loss,
)
from iclr26_theory_metrics.methods.neural_collapse.claims import claims, report


def _run(
    opt: str,
    nc0: float,
    nc3: float,
    *,
    valid: bool = True,
    role: str = "grid",
    momentum: float = 0.9,
    nc1: tuple[float, ...] = (1.0, 0.3, 0.1),
) -> dict:
    """One run summary; ``nc1`` is the per-epoch NC1 trajectory (training loss 2, 0.1, 0.01)."""
    final = dict(nc0=nc0, nc1=nc1[-1], nc2=0.1, nc2w=0.1, nc3=nc3, nc4=1.0, train_acc=1.0, test_acc=0.9)
    final.update(train_loss=0.01, nc3_alignment=nc3, nc3_duality=2 * nc3)
    return {
        "optimizer": opt,
        "lr": 0.01,
        "momentum": momentum,
        "weight_decay": 0.05,
        "role": role,
        "label": f"{opt} {nc0}",
        "valid": valid,
        "seconds": 1.0,
        "final": final,
        "nc1_epoch_mean": sum(nc1[1:]) / (len(nc1) - 1),
        "nc3_epoch_mean": 0.3,
        "trajectory": {"train_loss": [2.0, 0.1, 0.01], "nc1": list(nc1), "nc3": [nc3] * len(nc1)},
    }


def _results(runs: list[dict]) -> dict:
    return {
        "runs": runs,
        "best_by_optimizer": best_by_optimizer(runs),
        "regression": nc3_nc0_regression(runs),
        "momentum": momentum_comparison(runs),
    }


def _ufm(**changes: dict[str, Any]) -> dict[str, Any]:
    ufm: dict[str, Any] = {
        "sgd": {"alpha0": 1.0, "alpha_final": 1e-9, "decay_ratio": 1e-9, "theory_final": 1e-9, "max_rel_error": 1e-12},
        "sgdw": {"alpha0": 1.0, "alpha_final": 1e-5, "decay_ratio": 1e-5, "theory_final": 1e-5, "max_rel_error": 1e-12},
        "signumw": {
            "alpha_final": 255.0,
            "limit": 256.0,
            "rel_gap_to_limit": 1 / 256,
            "max_rel_error": 0.0,
            "max_drop_rel": 0.0,
            "monotone": True,
        },
        "condition": {
            "steps": 100,
            "sgd_inside": {"eta_lambda": 2.9, "decay_ratio": 1e-4, "log10_decay_ratio": -4.0, "theory_rate": 0.95},
            "sgdw_inside": {"eta_lambda": 2.9, "decay_ratio": 1e55, "log10_decay_ratio": 55.0, "theory_rate": 1.9},
            "sgd_outside": {"eta_lambda": 4.75, "decay_ratio": 1e79, "log10_decay_ratio": 79.0, "theory_rate": 2.5},
        },
        "signumw_rotated": {"alpha_peak": 8.6, "alpha_final": 8.3, "tail_min_over_peak": 0.95, "bound": 400.0},
        "signum_inverse": {
            "alpha_peak": 1.0,
            "alpha_tail_max": 1e-5,
            "tail_over_peak": 1e-5,
            "non_monotone": True,
            "max_drop_over_peak": 0.3,
        },
        "signum_constant": {
            "alpha_peak": 1.0,
            "alpha_tail_max": 0.1,
            "tail_over_peak": 0.1,
            "non_monotone": True,
            "max_drop_over_peak": 0.5,
        },
    }
    for key, update in changes.items():
        ufm[key] = {**ufm[key], **update}
    return ufm


def test_regression_recovers_an_exact_line() -> None:
    runs = [_run("sgd", 10.0**e, 0.5 + 0.2 * e) for e in (-4, -3, -1, 0)]
    runs.append(_run("adamw", 1e3, 99.0, valid=False))  # invalid runs are ignored
    reg = nc3_nc0_regression(runs)
    assert reg["n"] == 4 and reg["slope"] == pytest.approx(0.2) and reg["r2"] == pytest.approx(1.0)
    assert math.isnan(nc3_nc0_regression(runs[:2])["slope"])


def test_training_claims_hold_and_fail() -> None:
    runs = [
        _run("sgd", 1e-4, 0.10),
        _run("sgd", 1e-3, 0.30),
        _run("adamw", 1e-1, 0.60),
        _run("signumw", 5e-1, 0.70),
        _run("sgd", 2e-3, 0.5, role="ablation-matched", momentum=0.0, nc1=(1.0, 0.8, 0.5)),
    ]
    got = claims(_results(runs))
    verdict = {c.claim: c.verdict for c in got}
    nc0 = next(c for c in got if "NC0 orders" in c.claim)
    assert nc0.verdict == "holds" and nc0.ours == pytest.approx(-4) and nc0.baseline == pytest.approx(-1)
    assert all(v == "holds" for k, v in verdict.items() if "NC3" in k)
    final, at_loss = (c for c in got if "Momentum" in c.claim)
    assert final.verdict == at_loss.verdict == "holds"
    assert final.ours == pytest.approx(-1.0) and final.baseline == pytest.approx(math.log10(0.5))
    runs[-1] = _run("sgd", 2e-3, 0.5, role="ablation-matched", momentum=0.0, nc1=(1.0, 0.3, 0.11))  # a tie
    assert [c.verdict for c in claims(_results(runs)) if "Momentum" in c.claim] == ["fails", "fails"]
    runs[0] = _run("sgd", 5e-3, 0.10)  # only 20x below AdamW now
    nc0 = next(c for c in claims(_results(runs)) if "NC0 orders" in c.claim)
    assert nc0.verdict == "fails"


def test_training_claims_never_hold_without_an_effect() -> None:
    """Chance level: every optimizer ends at the same NC0 and NC3, momentum changes nothing."""
    runs = [_run(o, 1e-2, 0.3) for o in ("sgd", "adamw", "signumw")]
    runs += [_run("sgd", 1e-2, 0.3, role="ablation-matched", momentum=0.0)]
    got = claims(_results(runs))
    assert len(got) == 5
    assert [c.verdict for c in got if c.verdict == "holds"] == []


def test_nc1_at_equal_loss_and_the_matched_comparison() -> None:
    assert value_at_loss([2.0, 0.1, 0.01], [1.0, 0.3, 0.1], 0.1) == pytest.approx(0.3)
    # halfway in log-loss between epochs 1 and 2 -> geometric mean of their NC1
    assert value_at_loss([2.0, 0.1, 0.01], [1.0, 0.3, 0.1], math.sqrt(0.1 * 0.01)) == pytest.approx(math.sqrt(0.03))
    assert math.isnan(value_at_loss([2.0, 1.0, None], [1.0, 0.5, None], 0.5 - 1e-9))
    base = _run("sgd", 1e-3, 0.1)
    slow = _run("sgd", 1e-3, 0.1, role="ablation-matched", momentum=0.0, nc1=(1.0, 0.8, 0.5))
    slow["trajectory"]["train_loss"] = [2.0, 0.5, 0.05]  # never reaches the momentum run's 0.01
    mom = momentum_comparison([base, slow])
    assert mom is not None and mom["loss_level"] == 0.05 and mom["without_momentum"] is None
    assert mom["nc1_at_loss"]["matched"] == pytest.approx(0.5)
    f = math.log10(2.0)  # 0.05 sits this far (in log-loss) from 0.1 towards 0.01
    assert mom["nc1_at_loss"]["with_momentum"] == pytest.approx(0.3 ** (1 - f) * 0.1**f)
    assert momentum_comparison([base]) is None


def test_ufm_claims_hold_and_fail() -> None:
    assert all(c.verdict == "holds" for c in claims({"ufm": _ufm()}))
    bad = claims({"ufm": _ufm(sgdw={"decay_ratio": 0.5})})  # SGDW decayed only by half
    assert [c.claim for c in bad if c.verdict == "fails"] == [
        "UFM, SGD with decoupled WD (Thm 3.1): α_t decays exponentially"
    ]


def test_ufm_claims_never_hold_without_an_effect() -> None:
    """No effect: α stays where it started, the closed forms are off by 100 %, nothing drops or vanishes."""
    flat = {"decay_ratio": 1.0, "max_rel_error": 1.0}
    ufm = _ufm(
        sgd=flat,
        sgdw=flat,
        signumw={"rel_gap_to_limit": 1.0, "max_rel_error": 1.0, "max_drop_rel": 1.0},
        signum_inverse={"tail_over_peak": 1.0, "max_drop_over_peak": 0.0},
        signumw_rotated={"tail_min_over_peak": 0.0},
    )
    flat_c = {"decay_ratio": 1.0, "log10_decay_ratio": 0.0}
    keys = ("sgd_inside", "sgdw_inside", "sgd_outside")
    ufm["condition"] = {"steps": 100, **{key: {"eta_lambda": 3.0, **flat_c} for key in keys}}
    assert [c.verdict for c in claims({"ufm": ufm}) if c.verdict == "holds"] == []


def test_report_has_every_section() -> None:
    runs = [_run("sgd", 1e-4, 0.1), _run("adamw", 1e-1, 0.6)]
    runs += [_run("sgd", 1e-3, 0.2, role=role, momentum=0.0) for role in ("ablation", "ablation-matched")]
    text = report({"ufm": _ufm(), **_results(runs), "n_runs": 4, "n_valid": 4, "valid_accuracy": 0.99})
    for head in ("## UFM", "## Final NC metrics", "## All runs", "## NC3 vs log10 NC0", "## Momentum ablation"):
        assert head in text


def test_claim_texts_do_not_vary_with_the_runs() -> None:
    """`--seeds N` aggregates claims by their text: fitted numbers (R², the equal-loss level) stay out of it."""
    runs = [
        _run("sgd", 1e-4, 0.10),
        _run("sgd", 1e-3, 0.30),
        _run("adamw", 1e-1, 0.60),
        _run("signumw", 5e-1, 0.70),
        _run("sgd", 2e-3, 0.5, role="ablation-matched", momentum=0.0, nc1=(1.0, 0.8, 0.5)),
    ]
    other = [*runs[:1], _run("sgd", 2e-3, 0.45), *runs[2:4]]
    other.append(_run("sgd", 2e-3, 0.5, role="ablation-matched", momentum=0.0, nc1=(1.0, 0.3, 0.05)))
    texts = [(c.claim, c.metric) for c in claims(_results(runs))]
    assert texts == [(c.claim, c.metric) for c in claims(_results(other))]


def test_degenerate_results_make_no_claim_hold() -> None:
    """The shared degenerate cases on the effect results (UFM and training): every compared arm equal, every arm at
    the trivial level (α_t not decaying, NC0 of every optimizer alike, a flat regression, momentum changing
    nothing), ours worse than it; and the method's own: every optimizer giving the same run, the closed forms off
    by 100 %, the divergence runs not diverging."""
    import copy

    from iclr26_shared.testing import Arms, assert_no_claim_holds

    runs = [
        _run("sgd", 1e-4, 0.10),
        _run("sgd", 1e-3, 0.30),
        _run("adamw", 1e-1, 0.60),
        _run("signumw", 5e-1, 0.70),
        _run("sgd", 2e-3, 0.5, role="ablation-matched", momentum=0.0, nc1=(1.0, 0.8, 0.5)),
    ]
    res = {"ufm": _ufm(), **_results(runs)}
    assert all(c.holds for c in claims(res))
    nc0 = Arms(
        ours=["best_by_optimizer/sgd/nc0"],
        others=["best_by_optimizer/adamw/nc0", "best_by_optimizer/signumw/nc0"],
        trivial=1.0,
        worse=10.0,
    )
    momentum = Arms(
        ours=["momentum/with_momentum/nc1", "momentum/nc1_at_loss/with_momentum"],
        others=["momentum/matched/nc1", "momentum/nc1_at_loss/matched"],
        trivial=0.5,
        worse=5.0,
    )
    slope = Arms(ours=["regression/slope"], others=[], trivial=0.0, worse=-0.2)
    p_value = Arms(ours=["regression/p_value"], others=[], trivial=1.0)
    decay = Arms(
        ours=["ufm/sgd/decay_ratio", "ufm/sgdw/decay_ratio", "ufm/condition/sgd_inside/decay_ratio"],
        others=[],
        trivial=1.0,
        worse=10.0,
    )
    same = copy.deepcopy(runs)
    for r in same:
        r.update(final=copy.deepcopy(runs[0]["final"]), trajectory=copy.deepcopy(runs[0]["trajectory"]))
    same_results = {"ufm": _ufm(), **_results(same)}
    off = {"max_rel_error": 1.0}
    closed_forms_off = {"ufm": _ufm(sgd=off, sgdw=off, signumw=off), **_results(runs)}
    no_divergence = copy.deepcopy(res)
    for key in ("sgdw_inside", "sgd_outside"):
        no_divergence["ufm"]["condition"][key].update(decay_ratio=1.0, log10_decay_ratio=0.0)
    assert_no_claim_holds(
        claims,
        res,
        [nc0, momentum, slope, p_value, decay],
        extra_cases={
            "every optimizer gives the same run": same_results,
            "the closed forms off by 100 %": closed_forms_off,
            "the outside-condition runs do not diverge": no_divergence,
        },
    )
