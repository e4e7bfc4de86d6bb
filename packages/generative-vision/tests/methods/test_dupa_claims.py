"""The DUPA claims hold, fail and are inconclusive on hand-made results."""

from __future__ import annotations

import copy
from typing import Any

from iclr26_generative_vision.methods.dupa.claims import claims, report
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
        "alignment_init": {"same_raw": 0.5, "other_raw": 0.4, "same_projected": 0.5, "other_projected": 0.4},
        "alignment": {"dupa": {"same_raw": 0.7, "other_raw": 0.4, "same_projected": 0.95, "other_projected": 0.3}},
    }


def _verdicts(results: dict[str, Any]) -> list[str]:
    return [c.verdict for c in claims(results)]


def test_claims_hold_on_a_clear_win() -> None:
    cs = claims(_results())
    assert len(cs) == 8 and all(c.holds for c in cs), [(c.claim, c.ours, c.reference) for c in cs]
    assert "| dupa |" in report(_results()) and "Encoder sharing" in report(_results())


def test_claims_fail_when_dupa_is_worse_or_collapses() -> None:
    res = _results(ddt=10.0, dual=15.0, dupa=20.0)
    res["convergence"]["speedup"] = 0.0  # never reached
    res["sharing"][1]["fd"] = 20.0 * 1.5
    res["alignment"]["dupa"]["other_projected"] = 0.95  # collapse: every image projects to the same direction
    names = {c.claim: c.holds for c in claims(res)}
    assert not any(v for k, v in names.items() if "cuts sampling time" not in k and "Controlled" not in k)
    assert names[next(k for k in names if "Controlled" in k)]  # the alignment term itself was optimised


def test_both_at_chance_is_inconclusive_and_seeds_combine() -> None:
    res = _results(ddt=400.0, dual=380.0, dupa=350.0, noise=300.0)
    first = claims(res)[0]
    assert first.verdict == "inconclusive"
    seeds = [(i, claims(copy.deepcopy(_results(dupa=10.0 + shift)))) for i, shift in enumerate((0.0, 0.5, -0.5))]
    summary = summarize_seeds(seeds)
    assert summary[0].verdict == "holds" and not summary[0].single_seed
