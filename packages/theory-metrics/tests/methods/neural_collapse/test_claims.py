"""Claims hold and fail on constructed results, and never hold on chance-level (no-effect) results; the
regression and the selections compute what they say."""

from __future__ import annotations

import math
from typing import Any

import pytest

from iclr26_theory_metrics.analysis import best_by_optimizer, momentum_comparison, nc3_nc0_regression
from iclr26_theory_metrics.methods.neural_collapse.claims import claims, report


def _run(opt: str, nc0: float, nc3: float, *, valid: bool = True, role: str = "grid", momentum: float = 0.9) -> dict:
    final = dict(nc0=nc0, nc1=0.1, nc2=0.1, nc2w=0.1, nc3=nc3, nc4=1.0, train_acc=1.0, test_acc=0.9, train_loss=0.01)
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
        "nc1_epoch_mean": 0.2 if momentum > 0 else 0.5,
        "nc3_epoch_mean": 0.3,
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
        _run("sgd", 2e-3, 0.5, role="ablation", momentum=0.0),
    ]
    got = claims(_results(runs))
    verdict = {c.claim: c.verdict for c in got}
    nc0 = next(c for c in got if "NC0 orders" in c.claim)
    assert nc0.verdict == "holds" and nc0.ours == pytest.approx(-4) and nc0.baseline == pytest.approx(-1)
    assert all(v == "holds" for k, v in verdict.items() if "NC3" in k)
    mom = next(c for c in got if "Momentum" in c.claim)
    assert mom.verdict == "holds" and mom.ours == pytest.approx(math.log10(0.2))
    runs[0] = _run("sgd", 5e-3, 0.10)  # only 20x below AdamW now
    nc0 = next(c for c in claims(_results(runs)) if "NC0 orders" in c.claim)
    assert nc0.verdict == "fails"


def test_training_claims_never_hold_without_an_effect() -> None:
    """Chance level: every optimizer ends at the same NC0 and NC3, momentum changes nothing."""
    runs = [_run(o, 1e-2, 0.3) for o in ("sgd", "adamw", "signumw")]
    runs += [_run("sgd", 1e-2, 0.3, role="ablation", momentum=0.0)]
    runs[-1]["nc1_epoch_mean"] = runs[0]["nc1_epoch_mean"]
    got = claims(_results(runs))
    assert len(got) == 4
    assert [c.verdict for c in got if c.verdict == "holds"] == []


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
    )
    assert [c.verdict for c in claims({"ufm": ufm}) if c.verdict == "holds"] == []


def test_report_has_every_section() -> None:
    runs = [_run("sgd", 1e-4, 0.1), _run("adamw", 1e-1, 0.6), _run("sgd", 1e-3, 0.2, role="ablation", momentum=0.0)]
    text = report({"ufm": _ufm(), **_results(runs), "n_runs": 3, "n_valid": 3, "valid_accuracy": 0.99})
    for head in ("## UFM", "## Final NC metrics", "## All runs", "## NC3 vs log10 NC0", "## Momentum ablation"):
        assert head in text
