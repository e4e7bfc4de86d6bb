"""Claims hold and fail on constructed results; the regression and selections compute what they say."""

from __future__ import annotations

import math

import pytest

from iclr26_theory_metrics.methods.neural_collapse.analysis import (
    best_by_optimizer,
    momentum_comparison,
    nc3_nc0_regression,
)
from iclr26_theory_metrics.methods.neural_collapse.claims import claims


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
    out = {c.claim.split(":")[0]: c for c in claims(_results(runs))}
    nc0 = next(c for c in out.values() if "NC0 orders" in c.claim)
    assert nc0.holds and nc0.ours == 1e-4 and nc0.baseline == 1e-1
    assert next(c for c in out.values() if "NC3 grows" in c.claim).holds
    mom = next(c for c in out.values() if "Momentum" in c.claim)
    assert mom.holds and mom.ours == 0.2 and mom.baseline == 0.5
    runs[0] = _run("sgd", 5e-3, 0.10)  # only 20x below AdamW now
    nc0 = next(c for c in claims(_results(runs)) if "NC0 orders" in c.claim)
    assert not nc0.holds


def test_ufm_claims() -> None:
    ufm = {
        "sgd": {"alpha0": 1.0, "decay_ratio": 1e-9, "theory_final": 1e-9, "max_rel_error": 1e-12},
        "sgdw": {"alpha0": 1.0, "decay_ratio": 0.5, "theory_final": 0.5, "max_rel_error": 1e-12},
        "signumw": {
            "alpha_final": 255.0,
            "limit": 256.0,
            "rel_gap_to_limit": 1 / 256,
            "max_rel_error": 0.0,
            "monotone": True,
        },
        "signum_inverse": {"tail_over_peak": 1e-5, "non_monotone": True},
        "signum_constant": {"tail_over_peak": 0.1, "non_monotone": True},
    }
    got = [c.holds for c in claims({"ufm": ufm})]
    assert got == [True, False, True, True]  # SGDW decayed only by half: not exponential enough
