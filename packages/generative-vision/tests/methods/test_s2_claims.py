"""The claims logic on hand-made results (both outcomes)."""

from __future__ import annotations

from iclr26_generative_vision.methods.s2_guidance.claims import s2_claims


def _gmm(cfg: float, s2: float, naive: float) -> dict:
    m = lambda w: {"w2": w}  # noqa: E731
    return {"exact": {"cond": m(0.1), "cfg": m(0.9)}, "mlp": {"cfg": m(cfg), "s2": m(s2), "naive-s2": m(naive)}}


def _images(fd_s2: float, acc_s2: float, t_s2: float) -> dict:
    return {
        "dataset": "digits",
        "guiders": {
            "cfg": {"fd": 1.0, "class_accuracy": 0.9, "seconds_per_step": 1.0},
            "s2": {"fd": fd_s2, "class_accuracy": acc_s2, "seconds_per_step": t_s2},
        },
    }


def test_claims_hold_and_fail() -> None:
    good = s2_claims({"gmm": {"1d": _gmm(1.0, 0.8, 0.7)}, "images": _images(0.9, 0.95, 1.4)})
    assert [c.holds for c in good] == [True] * 6
    bad = s2_claims({"gmm": {"1d": _gmm(1.0, 1.1, 0.7)}, "images": _images(1.1, 0.8, 2.5)})
    assert [c.holds for c in bad] == [True, False, False, False, False, False]


def test_missing_experiments_give_no_rows() -> None:
    assert s2_claims({"experiment": "gmm"}) == []
    assert len(s2_claims({"images": _images(0.9, 0.95, 1.4)})) == 3
