"""The claims of S²-Guidance on hand-made results: both outcomes, chance levels, no vacuous pass."""

from __future__ import annotations

from typing import Any

from iclr26_generative_vision.methods.s2_guidance.claims import claims, diagnostics, report
from iclr26_shared.testing import Arms, assert_no_claim_holds


def _gmm(cfg: float, s2: float, naive: float, *, cond: float = 0.1, exact_cfg: float = 0.9) -> dict[str, Any]:
    def m(w: float) -> dict[str, Any]:
        return {"w2": w, "mode_shift": 0.0, "spread_ratio": 1.0, "outside_mass": 0.0, "nfe_per_sample": 100}

    return {
        "truth_w2_floor": 0.07,
        "w2_unconditional": 5.0,
        "exact": {"cond": m(cond), "cfg": m(exact_cfg)},
        "mlp": {"cfg": m(cfg), "s2": m(s2), "naive-s2": m(naive)},
    }


def _images(
    fd_s2: float, acc_s2: float, t_s2: float, *, fd_cfg: float = 1.0, acc_cfg: float = 0.9, nfe_s2: int = 140
) -> dict[str, Any]:
    def row(fd: float, acc: float, t: float, nfe: int) -> dict[str, Any]:
        return {"fd": fd, "class_accuracy": acc, "seconds_per_step": t, "nfe_per_sample": nfe, "time_vs_cfg": t}

    return {
        "dataset": "digits",
        "num_classes": 10,
        "num_train": 100,
        "classifier_test_accuracy": 0.95,
        "fd_test_vs_train": 0.05,
        "fd_noise": 50.0,
        "guiders": {"cfg": row(fd_cfg, acc_cfg, 1.0, 100), "s2": row(fd_s2, acc_s2, t_s2, nfe_s2)},
    }


def test_claims_hold_and_fail() -> None:
    good = claims({"gmm": {"1d": _gmm(1.0, 0.8, 0.7)}, "images": _images(0.9, 0.95, 1.4)})
    assert [c.verdict for c in good] == ["holds"] * 6
    bad = claims({"gmm": {"1d": _gmm(1.0, 1.1, 0.7)}, "images": _images(1.1, 0.8, 2.5)})
    # the accuracy claim is not measured without an FD gain: inconclusive, never a free pass
    assert [c.verdict for c in bad] == ["holds", "fails", "holds", "fails", "fails", "inconclusive"]


def test_gains_inside_the_noise_floor_do_not_hold() -> None:
    """Margins are the measured noise: a W₂ gain below the two-true-sets floor (0.07) and an FD gain below
    FD(test, train) (0.05) are not wins."""
    res = claims({"gmm": {"1d": _gmm(1.0, 0.95, 0.96)}, "images": _images(0.97, 0.95, 1.4)})
    assert [c.verdict for c in res][1:3] == ["fails", "fails"] and res[4].verdict == "fails"
    assert res[1].margin == 0.07 and res[4].margin == 0.05


def test_s2_identical_to_cfg_holds_no_s2_claim() -> None:
    results = {"gmm": {"1d": _gmm(1.0, 0.8, 0.7)}, "images": _images(0.9, 0.95, 1.4)}
    arms = [
        Arms(ours=["gmm/1d/mlp/s2/w2"], others=["gmm/1d/mlp/cfg/w2", "gmm/1d/mlp/naive-s2/w2"], trivial=5.0, worse=6.0),
        Arms(ours=["images/guiders/s2/fd"], others=["images/guiders/cfg/fd"], trivial=50.0, worse=60.0),
    ]
    same = {**results, "images": _images(1.0, 0.9, 1.4)}  # S² = CFG exactly on the images too
    assert_no_claim_holds(claims, results, arms, extra_cases={"S² identical to CFG (images)": same})


def test_chance_level_results_never_hold() -> None:
    """Both sides at chance (class-blind W₂, noise FD, 1/K accuracy), no gain of naive S², and S² with no
    third pass: every claim is inconclusive or fails, none holds."""
    chance = claims(
        {
            "gmm": {"1d": _gmm(5.0, 5.2, 5.1, cond=5.0, exact_cfg=5.0), "2d": _gmm(6.0, 6.0, 6.0, cond=6, exact_cfg=6)},
            "images": _images(60.0, 0.1, 1.0, fd_cfg=55.0, acc_cfg=0.1, nfe_s2=100),
        }
    )
    assert len(chance) == 10
    assert all(c.verdict != "holds" for c in chance), [(c.claim, c.verdict) for c in chance]


def test_accuracy_keeps_within_one_point_and_timing_is_a_diagnostic() -> None:
    res = claims({"images": _images(0.9, 0.895, 1.3)})
    assert len(res) == 2 and res[1].verdict == "holds" and res[1].margin == -0.01
    assert not any(c.timing for c in res)
    diag = diagnostics({"images": _images(0.9, 0.895, 1.3)})
    assert diag["time_ratio_s2_over_cfg"] == 1.3 and diag["nfe_per_sample"] == {"s2": 140, "cfg": 100}


def test_missing_experiments_give_no_rows_and_report_renders() -> None:
    assert claims({"experiment": "gmm"}) == []
    results = {"gmm": {"1d": _gmm(1.0, 0.9, 0.8)}, "images": _images(0.9, 0.95, 1.4)}
    assert len(claims({"images": results["images"]})) == 2
    text = report(results)
    assert "## Gaussian mixture 1d" in text and "## Images: digits" in text and "Diagnostic (not a claim)" in text
    assert "| s2       | 0.9    | 0.95" in text
    assert "shared the CPUs" not in text
    loaded = report({**results, "machine": {"loaded": True, "foreign_cpu_fraction": 0.5}})
    assert "(paper: +40%, SD3) (measured while other processes shared the CPUs)." in loaded


def test_three_seeds_give_directed_verdicts() -> None:
    """Over seeds the FD claim is judged on the paired gains: a consistent loss fails, a consistent win
    holds, a noisy tie is inconclusive (the ``--seeds 3`` path)."""
    from iclr26_shared.verdicts import summarize_seeds

    def fd_verdict(pairs: list[tuple[float, float]]) -> str:
        per_seed = [(i, claims({"images": _images(s2, 0.9, 1.3, fd_cfg=cfg)})) for i, (s2, cfg) in enumerate(pairs)]
        (fd,) = [s for s in summarize_seeds(per_seed) if "FID-style" in s.claim]
        return fd.verdict

    assert fd_verdict([(1.2, 1.0), (1.3, 1.05), (1.25, 1.0)]) == "fails"
    assert fd_verdict([(0.8, 1.0), (0.85, 1.05), (0.8, 1.0)]) == "holds"  # gains 0.2 > margin 0.05
    assert fd_verdict([(0.9, 1.0), (1.2, 1.0), (1.0, 1.02)]) == "inconclusive"
