"""The DUPA claims hold, fail and are inconclusive on hand-made results."""

from __future__ import annotations

import copy
from typing import Any

from iclr26_generative_vision.methods.dupa.claims import COLLAPSE_TOLERANCE, claims, diagnostics, report
from iclr26_shared.testing import Arms, assert_no_claim_holds
from iclr26_shared.verdicts import summarize_seeds


def _results(ddt: float = 20.0, dual: float = 15.0, dupa: float = 10.0, noise: float = 300.0) -> dict[str, Any]:
    curve = lambda end: [{"step": s, "fd": end * (1 + 2 / s), "class_accuracy": 0.9} for s in (1, 2, 4)]  # noqa: E731
    return {
        "dataset": "digits",
        "num_train": 100,
        "image_size": 8,
        "arch": "ddt",
        "train_steps": 4,
        "classifier_test_accuracy": 0.95,
        "fd_test_vs_train": 2.0,
        "fd_noise": noise,
        "shared_refresh_rate": 2,
        "final": {
            v: {"fd": fd, "class_accuracy": 0.9} for v, fd in (("ddt", ddt), ("dual-path", dual), ("dupa", dupa))
        },
        "curves": {"ddt": curve(ddt), "dual-path": curve(dual), "dupa": curve(dupa)},
        "convergence": {"ddt_final_curve_fd": 1.5 * ddt, "dupa_steps_to_ddt_final": 2, "speedup": 2.0},
        "sharing": [
            {
                "refresh_rate": 1,
                "fd": dupa,
                "seconds": 1.0,
                "class_accuracy": 0.9,
                "block_evals_per_sample": 150,
                "time_ratio": 1.0,
                "fd_ratio": 1.0,
            },
            {
                "refresh_rate": 2,
                "fd": dupa * 1.05,
                "seconds": 0.6,
                "class_accuracy": 0.9,
                "block_evals_per_sample": 100,
                "time_ratio": 0.6,
                "fd_ratio": 1.05,
            },
        ],
        "alignment_init": _cos(0.5, 0.1, 0.5, 0.1),
        "alignment": {"ddt": _cos(0.4, 0.05), "dupa": _cos(0.6, 0.05, 0.8, 0.1)},
    }


def _cos(same_raw: float, other_raw: float, same_proj: float | None = None, other_proj: float | None = None) -> dict:
    out = {"same_raw": same_raw, "other_raw": other_raw, "gap_raw": same_raw - other_raw}
    if same_proj is not None and other_proj is not None:
        out.update(same_projected=same_proj, other_projected=other_proj, gap_projected=same_proj - other_proj)
    return out


def _verdicts(results: dict[str, Any]) -> list[str]:
    return [c.verdict for c in claims(results)]


def test_claims_hold_on_a_clear_win() -> None:
    cs = claims(_results())
    assert len(cs) == 7 and all(c.holds for c in cs), [(c.claim, c.ours, c.reference) for c in cs]
    text = report(_results())
    assert "| dupa " in text and "Encoder sharing" in text and "Diagnostics (not claims)" in text
    assert [c.margin for c in cs] == [2.0, 2.0, 2.0, 0.1, 0.0, -COLLAPSE_TOLERANCE, -COLLAPSE_TOLERANCE]
    diag = diagnostics(_results())
    assert diag["sharing_time_ratio"] == 0.6 and abs(diag["controlled_check_cosine_gain"] - 0.3) < 1e-12


def test_claims_fail_when_dupa_is_worse_or_collapses() -> None:
    res = _results(ddt=10.0, dual=15.0, dupa=20.0)
    res["convergence"]["speedup"] = 0.0  # never reached
    res["sharing"][1]["fd"] = 20.0 * 1.5
    res["alignment"]["dupa"] = _cos(0.1, 0.1, 0.95, 0.95)  # collapse: centred, nothing image-specific left
    assert not any(c.holds for c in claims(res)), [(c.claim, c.verdict) for c in claims(res)]
    assert diagnostics(res)["controlled_check_cosine_gain"] > 0.4  # the loss was optimised: a diagnostic only


def test_both_at_chance_is_inconclusive_and_seeds_combine() -> None:
    # both at the FD of noise (the trivial answer): nothing shown, inconclusive
    res = _results(ddt=300.0, dual=300.0, dupa=300.0, noise=300.0)
    assert claims(res)[0].verdict == "inconclusive"
    # a baseline worse than noise leaves the claim inconclusive; ours worse than noise fails it (strict verdicts)
    assert claims(_results(ddt=400.0, dual=380.0, dupa=250.0, noise=300.0))[0].verdict == "inconclusive"
    assert claims(_results(ddt=400.0, dual=380.0, dupa=350.0, noise=300.0))[0].verdict == "fails"
    assert claims(_results(ddt=10.0, dual=10.0, dupa=9.0))[0].verdict == "fails"  # a gain inside FD(test, train)
    seeds = [(i, claims(copy.deepcopy(_results(dupa=10.0 + shift)))) for i, shift in enumerate((0.0, 0.5, -0.5))]
    summary = summarize_seeds(seeds)
    assert summary[0].verdict == "holds" and not summary[0].single_seed


def test_degenerate_results_hold_no_claim() -> None:
    """Every arm equal, every arm at chance (FD of noise, gap 0), DUPA worse than chance, and a collapsed
    DUPA whose projections match the untrained model's uncentred cosine but carry no image: nothing holds."""
    res = _results()
    # the collapse claims are non-inferiority claims (equal gaps hold, by their text): their degenerate
    # cases are the trivial gap 0 and a negative gap, given below, not "every arm equal"
    arms = [Arms(ours=["final/dupa/fd"], others=["final/ddt/fd", "final/dual-path/fd"], trivial=300.0, worse=400.0)]
    at_zero, below = copy.deepcopy(res), copy.deepcopy(res)
    for r, g in ((at_zero, 0.0), (below, -0.2)):
        r["alignment"]["dupa"]["gap_projected"] = r["alignment"]["dupa"]["gap_raw"] = g
    collapsed = copy.deepcopy(res)
    collapsed["alignment"]["dupa"] = _cos(0.3, 0.3, 0.99, 0.99)
    never = copy.deepcopy(res)
    never["convergence"]["speedup"] = 0.0
    never["sharing"][1]["fd"] = 2 * never["sharing"][0]["fd"]
    assert_no_claim_holds(
        claims,
        res,
        arms,
        extra_cases={
            "collapsed DUPA": collapsed,
            "no speed-up, sharing costs": never,
            "gaps at the trivial 0": at_zero,
            "gaps below 0": below,
        },
    )
