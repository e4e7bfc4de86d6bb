"""The ELViS claims hold, fail and are inconclusive on hand-made results."""

from __future__ import annotations

import copy
from typing import Any

from iclr26_generative_vision.methods.elvis.claims import claims, diagnostics, report
from iclr26_shared.testing import Arms, assert_no_claim_holds
from iclr26_shared.verdicts import summarize_seeds

SCORERS = ("global", "chamfer", "chamfer-ot", "ransac", "elvis", "elvis-no-dustbin", "rrt")


def _results(elvis: float = 0.8, rrt: float = 0.6, no_dustbin: float = 0.4, chance: float = 0.04) -> dict[str, Any]:
    base = {
        "global": 0.5,
        "chamfer": 0.55,
        "chamfer-ot": 0.6,
        "ransac": 0.7,
        "elvis-no-dustbin": no_dustbin,
        "rrt": rrt,
        "elvis": elvis,
    }
    domains = ("natural", "textures", "documents", "science")
    per = {d: {s: {"medium": v, "hard": v, "map": v} for s, v in base.items()} for d in domains}
    return {
        "train_domain": "natural",
        "held_out_domains": list(domains[1:]),
        "train": {"views": 10, "instances": 5},
        "domains": {d: {"queries": 5, "database": 20, "sources": {"x": 5}} for d in domains},
        "max_keypoints": 32,
        "rerank_k": 10,
        "control_auc": 0.8,
        "map": per,
        "summary": {s: {"id": v, "ood": v, "avg": v} for s, v in base.items()},
        "chance_map": {"id": chance, "ood": chance, "avg": chance},
        "pair_auc": {d: {s: 0.9 for s in SCORERS} for d in domains},
        "cost": {
            "chamfer-ot": {"params": 0, "us_per_pair": 50.0},
            "elvis": {"params": 30_000, "us_per_pair": 60.0},
            "elvis-no-dustbin": {"params": 20_000, "us_per_pair": 55.0},
            "rrt": {"params": 300_000, "us_per_pair": 400.0},
        },
        "losses": {"elvis": {"first": 0.7, "last": 0.3, "steps": 60}},
    }


def test_claims_hold_on_a_clear_win() -> None:
    cs = claims(_results())
    assert len(cs) == 6 and all(c.holds for c in cs), [(c.claim, c.ours, c.reference) for c in cs]
    text = report(_results())
    assert "| elvis            | 0.8" in text and "µs per pair" in text and "Pair AUC" in text
    assert "Diagnostic (not a claim)" in text and diagnostics(_results())["param_ratio_elvis_over_rrt"] == 0.1


def test_transformer_must_beat_the_global_shortlist_and_the_paper_score_is_judged() -> None:
    res = _results(rrt=0.45)  # a transformer worse than no re-ranking (global 0.5)
    first = claims(res)[0]
    assert "transformer" in first.claim and first.verdict == "inconclusive" and first.chance == 0.5
    tie = claims(_results(rrt=0.5))[0]  # a transformer exactly at the shortlist: still no win to count
    assert tie.verdict == "inconclusive" and tie.baseline == tie.chance == 0.5
    better = claims(_results(rrt=0.6))[0]  # a transformer that beats the shortlist: the claim is judged
    assert better.verdict == "holds" and better.baseline == 0.6
    res = _results(no_dustbin=0.5)
    res["summary"]["elvis-sigmoid-s"] = {"id": 0.45, "ood": 0.45, "avg": 0.45}  # σ(τ·s), below the shortlist
    res["pair_auc"]["natural"]["elvis-sigmoid-s"] = 0.9
    verdicts = {c.claim: c.verdict for c in claims(res)}
    assert not any(v == "holds" for k, v in verdicts.items() if "time per pair" not in k and "Controlled" not in k)


def test_degenerate_results_hold_no_claim() -> None:
    res = _results()
    arms = [
        Arms(
            ours=["summary/elvis"],
            others=["summary/rrt", "summary/global", "summary/chamfer-ot", "summary/elvis-no-dustbin"],
            trivial=0.04,
            worse=0.02,
        )
    ]
    slow = _results()
    slow["cost"]["elvis"]["us_per_pair"] = 500.0
    chance_auc = _results()
    chance_auc["pair_auc"]["natural"]["elvis"] = 0.5
    assert_no_claim_holds(claims, res, arms, extra_cases={"slower than RRT": slow, "AUC at chance": chance_auc})


def test_claims_fail_when_elvis_loses() -> None:
    res = _results(elvis=0.3, rrt=0.6, no_dustbin=0.5)
    res["cost"]["elvis"]["params"] = 200_000
    res["pair_auc"]["natural"]["elvis"] = 0.55
    held = {c.claim: c.holds for c in claims(res)}
    assert not any(v for k, v in held.items() if "time per pair" not in k)


def test_both_at_chance_is_inconclusive_and_seeds_combine() -> None:
    res = _results(elvis=0.04, rrt=0.04, no_dustbin=0.04, chance=0.04)
    for row in res["summary"].values():
        row.update(id=0.04, ood=0.04, avg=0.04)
    verdicts = [c.verdict for c in claims(res)]
    assert verdicts[:4] == ["inconclusive"] * 4  # every side at the random ranking's mAP
    for row in res["summary"].values():
        row.update(id=0.03, ood=0.03, avg=0.03)
    # ours below chance fails (strict verdicts); the transformer row's trivial answer is the global shortlist,
    # where every row now sits: both at it, inconclusive
    assert [c.verdict for c in claims(res)][:4] == ["inconclusive", "fails", "fails", "fails"]
    res["pair_auc"]["natural"]["elvis"] = 0.5
    assert not claims(res)[-1].holds  # AUC at chance misses the control's bar
    seeds = [(i, claims(copy.deepcopy(_results(elvis=0.8 + shift)))) for i, shift in enumerate((0.0, 0.02, -0.02))]
    summary = summarize_seeds(seeds)
    assert summary[0].verdict == "holds" and not summary[0].single_seed


def test_claims_skip_what_was_not_measured() -> None:
    res = _results()
    del res["summary"]["rrt"], res["summary"]["elvis-no-dustbin"], res["cost"]["rrt"]
    names = [c.claim for c in claims(res)]
    assert len(names) == 3 and not any("transformer" in n or "dustbin" in n for n in names)
