"""The claims of S²-Guidance on hand-made results: both outcomes, chance levels, no vacuous pass."""

from __future__ import annotations

from typing import Any

from iclr26_generative_vision.methods.s2_guidance.claims import claims, report


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
        "fd_test_vs_train": 0.5,
        "fd_noise": 50.0,
        "guiders": {"cfg": row(fd_cfg, acc_cfg, 1.0, 100), "s2": row(fd_s2, acc_s2, t_s2, nfe_s2)},
    }


def test_claims_hold_and_fail() -> None:
    good = claims({"gmm": {"1d": _gmm(1.0, 0.8, 0.7)}, "images": _images(0.9, 0.95, 1.4)})
    assert [c.verdict for c in good] == ["holds"] * 7
    bad = claims({"gmm": {"1d": _gmm(1.0, 1.1, 0.7)}, "images": _images(1.1, 0.8, 2.5)})
    assert [c.verdict for c in bad] == ["holds", "fails", "holds", "fails", "fails", "fails", "fails"]


def test_chance_level_results_never_hold() -> None:
    """Both sides at chance (class-blind W₂, noise FD, 1/K accuracy), no gain of naive S², and S² with no
    third pass: every claim is inconclusive or fails, none holds."""
    chance = claims(
        {
            "gmm": {"1d": _gmm(5.0, 5.2, 5.1, cond=5.0, exact_cfg=5.0), "2d": _gmm(6.0, 6.0, 6.0, cond=6, exact_cfg=6)},
            "images": _images(60.0, 0.1, 1.0, fd_cfg=55.0, acc_cfg=0.1, nfe_s2=100),
        }
    )
    assert len(chance) == 11
    assert all(c.verdict != "holds" for c in chance), [(c.claim, c.verdict) for c in chance]


def test_accuracy_keeps_within_one_point_and_timing_is_marked() -> None:
    res = claims({"images": _images(0.9, 0.895, 1.3)})
    acc, timing = res[1], res[2]
    assert acc.verdict == "holds" and acc.margin == -0.01
    assert timing.timing and timing.threshold == 1.6 and not res[0].timing


def test_missing_experiments_give_no_rows_and_report_renders() -> None:
    assert claims({"experiment": "gmm"}) == []
    results = {"gmm": {"1d": _gmm(1.0, 0.9, 0.8)}, "images": _images(0.9, 0.95, 1.4)}
    assert len(claims({"images": results["images"]})) == 3
    text = report(results)
    assert "## Gaussian mixture 1d" in text and "## Images: digits" in text


def test_three_seeds_give_directed_verdicts() -> None:
    """Over seeds the FD claim is judged on the paired gains: a consistent loss fails, a consistent win
    holds, a noisy tie is inconclusive (the ``--seeds 3`` path)."""
    from iclr26_shared.verdicts import summarize_seeds

    def fd_verdict(pairs: list[tuple[float, float]]) -> str:
        per_seed = [(i, claims({"images": _images(s2, 0.9, 1.3, fd_cfg=cfg)})) for i, (s2, cfg) in enumerate(pairs)]
        (fd,) = [s for s in summarize_seeds(per_seed) if "FID-style" in s.claim]
        return fd.verdict

    assert fd_verdict([(1.2, 1.0), (1.3, 1.05), (1.25, 1.0)]) == "fails"
    assert fd_verdict([(0.8, 1.0), (0.85, 1.05), (0.8, 1.0)]) == "holds"
    assert fd_verdict([(0.9, 1.0), (1.2, 1.0), (1.0, 1.02)]) == "inconclusive"
