"""Claims: computed from results.json-shaped dicts; they hold, fail and stay inconclusive where they should."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from iclr26_sequence_models.methods.selective_rope.claims import claims, report

CHANCE = {"state": 0.5, "copy": 1 / 26, "mqar": 0.25}
UNIGRAM_BPB = 4.5


def _task(task: str, metrics: dict[str, float]) -> dict[str, Any]:
    settings = {
        "group": "S2",
        "seq_len": 128,
        "eval_len": 512,
        "copy_max_len": 16,
        "layer": "gla",
        "num_layers": 1,
        "hidden_size": 64,
        "steps": 10,
        "lr": 1e-3,
    }
    level = {"unigram_bpb": UNIGRAM_BPB} if task == "lm" else {"chance": CHANCE[task]}
    runs = {
        p: {"metric": m, "params": 100, "train_seconds": 1.0, "final": {"metric": m, **level}}
        for p, m in metrics.items()
    }
    return {"settings": settings, "runs": runs}


def _results(**tasks: dict[str, float]) -> dict[str, Any]:
    return {"tasks": {t: _task(t, m) for t, m in tasks.items()}}


def test_claims_hold_and_fail() -> None:
    good = _results(
        state={"nope": 0.5, "rope": 0.6, "selective": 0.99},
        copy={"nope": 0.2, "rope": 0.1, "selective": 0.6},
        mqar={"nope": 0.3, "rope": 0.5, "selective": 0.6},
        lm={"nope": 2.5, "rope": 2.4, "selective": 2.3},
    )
    out = claims(good)
    assert [c.verdict for c in out] == ["holds"] * 5
    assert (out[0].ours, out[0].baseline) == (1.0, 0.0) and out[-1].ours == 2.3 and out[-1].better == "lower"
    assert out[2].baseline == 0.2  # copy: the best baseline is NoPE here, not RoPE
    bad = _results(
        state={"nope": 0.5, "rope": 0.8, "selective": 0.85},  # RoPE far from chance (gap 0.05), Sel. below 0.9
        copy={"nope": 0.6, "rope": 0.1, "selective": 0.5},  # Sel. beats RoPE but not NoPE
        mqar={"nope": 0.3, "rope": 0.5, "selective": 0.4},  # Sel. beats NoPE but not RoPE
        lm={"nope": 2.5, "rope": 2.2, "selective": 2.3},
    )
    assert [c.verdict for c in claims(bad)] == ["fails"] * 5
    assert re.search(r"\| selective +\| 0\.9900 ", report(good))
    # State tracking is judged by solving (>= 0.99 at the test length), per seed: baselines at chance while
    # Selective RoPE solves is the paper's claim itself.
    at_chance_base = _results(state={"nope": 0.5, "rope": 0.52, "selective": 0.99})
    assert [c.verdict for c in claims(at_chance_base)] == ["holds", "holds"]
    # A win inside the margin does not hold (copy +0.01 < 0.02, MQAR +0.015 < 0.02, LM 0.005 < 0.01 bits/byte).
    close = _results(
        copy={"nope": 0.2, "rope": 0.1, "selective": 0.21},
        mqar={"nope": 0.3, "rope": 0.5, "selective": 0.515},
        lm={"nope": 2.5, "rope": 2.4, "selective": 2.395},
    )
    assert [c.verdict for c in claims(close)] == ["fails"] * 3


def test_state_claims_count_solved_runs() -> None:
    """S2's claim as the paper states it: solved (>= 0.99 at the test length) or not, per seed; the replicated
    verdict averages these indicators into the success rate over seeds (with its interval)."""
    from iclr26_sequence_models.methods.selective_rope.claims import SOLVED, solved

    assert SOLVED == 0.99 and solved(0.99) == 1.0 and solved(0.9899) == 0.0 and math.isnan(solved(math.nan))
    both = claims(_results(state={"nope": 0.5, "rope": 0.995, "selective": 1.0}))
    assert [c.verdict for c in both] == ["fails", "holds"]  # RoPE solves too: not "more seeds than RoPE"
    base_only = claims(_results(state={"nope": 0.999, "rope": 0.5, "selective": 0.97}))
    assert [c.verdict for c in base_only] == ["fails", "fails"]
    assert (base_only[0].ours, base_only[0].baseline) == (0.0, 1.0)
    near = claims(_results(state={"nope": 0.5, "rope": 0.5, "selective": 0.985}))  # a mean of 0.985 is not solved
    assert [c.verdict for c in near] == ["fails", "fails"]
    texts = {c.claim + c.metric for c in both}  # the same text at every seed (the replicated verdict groups by it)
    assert texts == {c.claim + c.metric for c in near} and not any(re.search(r"0\.98|0\.97", t) for t in texts)


@pytest.mark.parametrize(
    ("selective", "verdicts", "rate"),
    [
        ([1.0, 1.0, 1.0, 1.0, 0.999], ["holds", "holds"], 1.0),
        # 4 of 5 seeds vs none: +0.8 [0.24, 1.36] holds; "most seeds" (0.8 vs 0.5) is not decided by 5 seeds
        ([1.0, 1.0, 1.0, 0.995, 0.5], ["holds", "inconclusive"], 0.8),
        ([1.0, 1.0, 0.999, 0.5, 0.5], ["inconclusive", "inconclusive"], 0.6),  # 3 of 5: the interval straddles
        ([0.5, 0.5, 0.5, 0.5, 0.5], ["fails", "fails"], 0.0),
    ],
)
def test_success_rate_over_seeds_with_its_interval(selective: list[float], verdicts: list[str], rate: float) -> None:
    """The replicated verdict (``--seeds 5``) of the S2 claims: the success rate with a 95 % t-interval."""
    from iclr26_shared.verdicts import summarize_seeds

    per_seed = [
        (seed, claims(_results(state={"nope": 0.5, "rope": 0.52, "selective": acc})))
        for seed, acc in enumerate(selective)
    ]
    summary = summarize_seeds(per_seed)
    assert [x.verdict for x in summary] == verdicts
    assert summary[0].ours_mean == pytest.approx(rate) and summary[0].ref_mean == 0.0
    if rate == 0.8:
        assert (summary[0].gain_low, summary[0].gain_high) == pytest.approx((0.2448, 1.3552), abs=1e-4)


def test_no_claim_holds_at_chance() -> None:
    """Every side at chance (or at the unigram predictor's bits/byte): nothing may hold. Ours below chance
    plus its tolerance fails (strict verdicts); ours at the unigram level with RoPE worse is inconclusive."""
    at_chance = _results(
        state={"nope": 0.5, "rope": 0.5, "selective": 0.51},
        copy={"nope": 1 / 26, "rope": 0.03, "selective": 0.05},
        mqar={"nope": 0.25, "rope": 0.24, "selective": 0.26},
        lm={"nope": UNIGRAM_BPB, "rope": UNIGRAM_BPB + 0.1, "selective": UNIGRAM_BPB},
    )
    verdicts = [c.verdict for c in claims(at_chance)]
    assert verdicts == ["fails", "fails", "fails", "fails", "inconclusive"]


def test_claims_only_for_tasks_that_ran() -> None:
    only_lm = {"tasks": {"lm": _task("lm", {"rope": 2.4, "selective": 2.3})}}
    assert len(claims(only_lm)) == 1
    assert claims({"tasks": {"state": _task("state", {"selective": 0.9})}}) == []
    assert claims({"tasks": {"copy": _task("copy", {"rope": 0.1, "selective": 0.9})}}) == []  # no NoPE run


def test_no_degenerate_claim_holds() -> None:
    """The shared degenerate cases on a result where every claim holds, plus selective-rope's own: a
    Selective RoPE that collapsed to chance on every task while the baselines learned."""
    import copy

    from iclr26_shared.testing import Arms, assert_no_claim_holds

    good = _results(
        state={"nope": 0.5, "rope": 0.6, "selective": 0.99},
        copy={"nope": 0.2, "rope": 0.1, "selective": 0.6},
        mqar={"nope": 0.3, "rope": 0.5, "selective": 0.6},
        lm={"nope": 2.5, "rope": 2.4, "selective": 2.3},
    )
    assert all(c.holds for c in claims(good))
    arms = [
        Arms(
            ours=[f"tasks/{t}/runs/selective/metric"],
            others=[f"tasks/{t}/runs/rope/metric", f"tasks/{t}/runs/nope/metric"],
            trivial=CHANCE[t],
            worse=0.0,
        )
        for t in ("state", "copy", "mqar")
    ] + [
        Arms(
            ours=["tasks/lm/runs/selective/metric"],
            others=["tasks/lm/runs/rope/metric", "tasks/lm/runs/nope/metric"],
            trivial=UNIGRAM_BPB,
            worse=UNIGRAM_BPB + 1.0,
        )
    ]
    collapsed = copy.deepcopy(good)
    for t in ("state", "copy", "mqar"):
        collapsed["tasks"][t]["runs"]["selective"]["metric"] = CHANCE[t]
    collapsed["tasks"]["lm"]["runs"]["selective"]["metric"] = UNIGRAM_BPB
    assert_no_claim_holds(claims, good, arms, extra_cases={"Selective RoPE collapsed to chance": collapsed})


def test_smoke_run_saves_every_model_and_copy_axis(tmp_path: Path) -> None:
    """Each (task, position) run's final model is saved (the transformers class the run trained) and loads
    back bit for bit."""
    import torch

    from iclr26_sequence_models.methods.selective_rope.spec import SPEC
    from iclr26_sequence_models.nn.hf import SelectiveRopeForCausalLM
    from iclr26_shared.models import list_models
    from iclr26_shared.testing import assert_models_roundtrip, smoke_run

    run, _ = smoke_run(SPEC, tmp_path, task="copy")
    meta = list_models(run.path)
    assert set(meta) == {"copy-nope", "copy-rope", "copy-selective"}
    assert meta["copy-selective"]["class"] == "iclr26_sequence_models.nn.hf:SelectiveRopeForCausalLM"
    ids = torch.randint(0, 10, (2, 12), generator=torch.Generator().manual_seed(0))
    assert_models_roundtrip(run, {n: (lambda m: m(ids).logits) for n in meta})
    assert isinstance(run.saved_models["copy-selective"], SelectiveRopeForCausalLM)
