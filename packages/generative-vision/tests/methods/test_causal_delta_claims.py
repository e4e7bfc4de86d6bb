"""The causal-delta claims hold, fail and are inconclusive on hand-made results."""

from __future__ import annotations

import copy
from typing import Any

from iclr26_generative_vision.methods.causal_delta.claims import acc_noise, claims, report
from iclr26_shared.testing import Arms, assert_no_claim_holds
from iclr26_shared.verdicts import summarize_seeds

VERBS = ["open", "close", "turn-on", "turn-off", "move-left", "move-right", "recolour"]


def _results(
    cde: tuple[float, float] = (0.95, 0.75),
    vanilla: tuple[float, float] = (0.96, 0.4),
    no_contrast: float = 0.5,
    no_sparse: float = 0.7,
    antonym: float = -0.8,
    vanilla_antonym: float = -0.5,
    chance: float = 1 / 7,
) -> dict[str, Any]:
    def row(iid: float, ood: float) -> dict[str, float]:
        return {"iid": iid, "ood": ood, "gap": iid - ood}

    acc = {
        "comp": {
            "vanilla": row(*vanilla),
            "cde": row(*cde),
            "cde-no-contrast": row(cde[0], no_contrast),
            "cde-no-sparse": row(cde[0], no_sparse),
        },
        "noun": {"vanilla": row(*vanilla), "cde": row(*cde)},
    }

    def geometry(antonym: float) -> dict[str, Any]:
        return {
            "matrix": [[0.0] * 7] * 7,
            "antonyms": {"open/close": -1.0},
            "antonym_mean": -1.0,
            "other_mean": 0.1,
            "pairwise": {"open/close": antonym},
            "antonym_pairwise": antonym,
            "other_pairwise": 0.0,
            "within": 0.5,
        }

    geo = {
        "matrix": [[0.0] * 7] * 7,
        "antonyms": {"open/close": -1.0},
        "antonym_mean": -1.0,
        "other_mean": 0.1,
        "pairwise": {"open/close": antonym},
        "antonym_pairwise": antonym,
        "other_pairwise": 0.0,
        "within": 0.5,
    }
    return {
        "verbs": VERBS,
        "nouns": ["a"] * 8,
        "pool": {"pairs": 100, "image_size": 32, "from_cache": False},
        "splits": {k: {"train": 50, "iid_test": 10, "ood_test": 20, "held_out": ["x"]} for k in ("comp", "noun")},
        "chance": {k: {"iid": chance, "ood": chance} for k in ("comp", "noun")},
        "control_accuracy": 0.7,
        "antonym_threshold": -0.5,
        "accuracy": acc,
        "geometry_split": "comp",
        "geometry": {"cde": geo, "vanilla": geometry(vanilla_antonym)},
        "losses": {"comp/cde": {"first": 3.0, "last": 1.0, "steps": 10}},
    }


def test_claims_hold_on_a_clear_win() -> None:
    cs = claims(_results())
    assert len(cs) == 9 and all(c.holds for c in cs), [(c.claim, c.ours, c.reference) for c in cs]
    text = report(_results())
    assert "| cde | 0.95 | 0.75 | 0.2 |" in " ".join(text.split()) and "antonyms, mean-δ" in text
    assert cs[0].margin == acc_noise(_results(), "comp") == 0.5 / 20**0.5  # binomial SE of 20 OOD pairs


def test_a_smaller_gap_from_a_lower_iid_accuracy_and_a_vanilla_like_geometry_are_no_win() -> None:
    res = _results(cde=(0.80, 0.70), antonym=-0.52)  # gap 0.10 < vanilla's 0.56, but IID 0.80 vs 0.96
    verdicts = {c.claim: c.holds for c in claims(res)}
    assert not next(v for k, v in verdicts.items() if "keeps the vanilla" in k)
    assert not next(v for k, v in verdicts.items() if "anti-parallel" in k)  # −0.52 vs vanilla −0.5: within margin


def test_degenerate_results_hold_no_claim() -> None:
    res = _results()
    c = 1 / 7
    arms = [
        Arms(ours=["accuracy/comp/cde/ood"], others=["accuracy/comp/vanilla/ood"], trivial=c, worse=0.0),
        Arms(ours=["accuracy/noun/cde/ood"], others=["accuracy/noun/vanilla/ood"], trivial=c, worse=0.0),
        Arms(
            ours=["accuracy/comp/cde-no-sparse/ood"], others=["accuracy/comp/cde-no-contrast/ood"], trivial=c, worse=0.0
        ),
        Arms(
            ours=["geometry/cde/antonym_pairwise"], others=["geometry/vanilla/antonym_pairwise"], trivial=0.0, worse=0.5
        ),
    ]
    # the IID claim is non-inferiority (equal arms hold by its text); its degenerate case is CDE at chance
    at_chance = copy.deepcopy(res)
    for split in ("comp", "noun"):
        at_chance["accuracy"][split]["cde"] = {"iid": c, "ood": c, "gap": 0.0}
    assert_no_claim_holds(claims, res, arms, extra_cases={"CDE at chance": at_chance})


def test_claims_fail_when_cde_loses() -> None:
    res = _results(cde=(0.6, 0.1), vanilla=(0.96, 0.5), no_contrast=0.7, no_sparse=0.5, antonym=0.3)
    held = [c.holds for c in claims(res)]
    assert not any(held)


def test_chance_level_results_hold_no_claim_and_seeds_combine() -> None:
    c = 1 / 7
    res = _results(cde=(c, c), vanilla=(c, c), no_contrast=c, no_sparse=c, antonym=0.0)
    cs = claims(res)
    assert not any(x.holds for x in cs)
    assert [x.verdict for x in cs[:5]] == ["inconclusive"] * 5  # gaps unmeasurable at chance, accuracies at chance
    seeds = [(i, claims(copy.deepcopy(_results(cde=(0.95, 0.75 + s))))) for i, s in enumerate((0.0, 0.02, -0.02))]
    summary = summarize_seeds(seeds)
    assert summary[0].verdict == "holds" and not summary[0].single_seed


def test_claims_skip_what_was_not_measured() -> None:
    res = _results()
    del res["accuracy"]["noun"], res["accuracy"]["comp"]["cde-no-sparse"], res["geometry"]["cde"]
    names = [c.claim for c in claims(res)]
    assert len(names) == 4 and not any("systematic" in n or "contrastive" in n or "Antonym" in n for n in names)
