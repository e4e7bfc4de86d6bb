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
BIGRAM_BPB = 3.3  # the LM's trivial level: the better of the two


def _task(task: str, metrics: dict[str, float], preset: str = "long", **settings: Any) -> dict[str, Any]:
    """A results.json task entry with ``metrics`` per position and the preset's settings (``long`` meets every
    budget, so its claims carry no "cannot decide" note)."""
    from iclr26_sequence_models.methods.selective_rope.config import PRESETS

    level = {"unigram_bpb": UNIGRAM_BPB, "bigram_bpb": BIGRAM_BPB} if task == "lm" else {"chance": CHANCE[task]}
    runs = {
        p: {"metric": m, "params": 100, "train_seconds": 1.0, "final": {"metric": m, **level}}
        for p, m in metrics.items()
    }
    return {"settings": {**PRESETS[preset].settings(task).to_dict(), **settings}, "runs": runs}


def _results(preset: str = "long", **tasks: dict[str, float]) -> dict[str, Any]:
    return {"tasks": {t: _task(t, m, preset) for t, m in tasks.items()}}


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
    # A win inside the margin does not hold (copy +0.01 < 0.02, MQAR +0.015 < 0.02).
    close = _results(
        copy={"nope": 0.2, "rope": 0.1, "selective": 0.21}, mqar={"nope": 0.3, "rope": 0.5, "selective": 0.515}
    )
    assert [c.verdict for c in claims(close)] == ["fails"] * 2


def test_lm_claim_is_non_inferiority_on_gla_and_a_gain_on_fox_and_gdn() -> None:
    """GLA (the paper's 370M tie) and attention: Selective RoPE may trail RoPE by less than LM_NONINF_MARGIN
    bits/byte; FoX and GDN (the paper's gains): it must lead by more than LM_MARGIN."""
    from iclr26_sequence_models.methods.selective_rope.claims import LM_MARGIN, LM_NONINF_MARGIN

    assert (LM_NONINF_MARGIN, LM_MARGIN) == (0.015, 0.01)

    def lm(layer: str, rope: float, sel: float) -> Any:
        (c,) = claims({"tasks": {"lm": _task("lm", {"rope": rope, "selective": sel}, layer=layer)}})
        return c

    tie = lm("gla", 1.70, 1.71)  # 0.01 behind: inside the margin
    assert tie.verdict == "holds" and tie.margin == -LM_NONINF_MARGIN and "non-inferiority" in tie.claim
    assert lm("gla", 1.70, 1.72).verdict == "fails"  # 0.02 behind
    assert lm("gla", 1.70, 1.715).verdict == "fails"  # exactly the margin: a tie with the bound does not hold
    assert lm("attn", 1.70, 1.69).verdict == "holds" and "non-inferiority" in lm("attn", 1.7, 1.69).claim
    for host in ("fox", "gdn"):
        assert lm(host, 1.70, 1.71).verdict == "fails"  # behind: no gain
        assert lm(host, 1.70, 1.695).verdict == "fails"  # 0.005 ahead < LM_MARGIN
        gain = lm(host, 1.70, 1.68)
        assert gain.verdict == "holds" and gain.margin == LM_MARGIN and "non-inferiority" not in gain.claim


def test_non_inferiority_needs_a_working_baseline() -> None:
    """The LM non-inferiority claim never holds on trivial models: both arms at the trivial level (the better
    of the unigram and bigram byte models), a RoPE baseline no better than it (whatever Selective RoPE does),
    or a Selective RoPE worse than it. Results without the bigram level fall back to the unigram one."""
    from iclr26_sequence_models.methods.selective_rope.claims import lm_trivial_bpb

    def verdict(rope: float, sel: float) -> str:
        return claims({"tasks": {"lm": _task("lm", {"rope": rope, "selective": sel})}})[0].verdict

    assert verdict(BIGRAM_BPB, BIGRAM_BPB) == "inconclusive"  # both at the trivial level: a tie of nothing
    assert verdict(BIGRAM_BPB + 0.3, BIGRAM_BPB + 0.31) == "fails"  # both worse than the bigram model
    assert verdict(BIGRAM_BPB, 2.0) == "inconclusive"  # the baseline does not beat the trivial model
    assert verdict(BIGRAM_BPB + 0.5, 2.0) == "inconclusive"
    assert verdict(2.0, BIGRAM_BPB) == "fails"  # ours at the trivial level
    assert verdict(2.0, 2.005) == "holds"  # working models, a tie
    assert (
        lm_trivial_bpb({"unigram_bpb": 4.5}) == 4.5 and lm_trivial_bpb({"unigram_bpb": 4.5, "bigram_bpb": 3.3}) == 3.3
    )
    assert lm_trivial_bpb({}) is None


def test_quick_claims_say_where_quick_cannot_decide() -> None:
    """Below the long preset's budgets (S2 on 128,000 words in >= 1000 steps, copying 2000 steps, LM head
    dim 64 x 1000 steps x 512 windows) each claim's text says that its budget cannot decide it; MQAR has
    no such budget; the long and full presets meet them."""
    metrics = {
        "state": {"nope": 0.5, "rope": 0.6, "selective": 0.99},
        "copy": {"nope": 0.2, "rope": 0.1, "selective": 0.6},
        "mqar": {"nope": 0.3, "rope": 0.5, "selective": 0.6},
        "lm": {"nope": 2.5, "rope": 2.4, "selective": 2.3},
    }
    quick = claims(_results("quick", **metrics))
    note = "this budget cannot decide it"
    assert [note in c.claim for c in quick] == [True, True, True, False, True]
    assert "train_sequences 12800 < 128000, steps 400 < 1000" in quick[0].claim
    assert "steps 300 < 2000" in quick[2].claim
    assert "steps 250 < 1000, eval_size 64 < 512, head_dim 16 < 64" in quick[4].claim
    for preset in ("long", "full"):
        assert not any(note in c.claim for c in claims(_results(preset, **metrics)))
    assert [c.verdict for c in quick] == [c.verdict for c in claims(_results("long", **metrics))]


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
    """Every side at chance (or at the trivial byte model's bits/byte): nothing may hold. Ours below chance
    plus its tolerance fails (strict verdicts); ours at the trivial level with RoPE worse is inconclusive."""
    at_chance = _results(
        state={"nope": 0.5, "rope": 0.5, "selective": 0.51},
        copy={"nope": 1 / 26, "rope": 0.03, "selective": 0.05},
        mqar={"nope": 0.25, "rope": 0.24, "selective": 0.26},
        lm={"nope": BIGRAM_BPB, "rope": BIGRAM_BPB + 0.1, "selective": BIGRAM_BPB},
    )
    verdicts = [c.verdict for c in claims(at_chance)]
    assert verdicts == ["fails", "fails", "fails", "fails", "inconclusive"]


def test_claims_only_for_tasks_that_ran() -> None:
    only_lm = {"tasks": {"lm": _task("lm", {"rope": 2.4, "selective": 2.3})}}
    assert len(claims(only_lm)) == 1
    assert claims({"tasks": {"state": _task("state", {"selective": 0.9})}}) == []
    assert claims({"tasks": {"copy": _task("copy", {"rope": 0.1, "selective": 0.9})}}) == []  # no NoPE run


@pytest.mark.parametrize(("preset", "host"), [("quick", "gla"), ("long", "gla"), ("long", "fox"), ("full", "gdn")])
def test_no_degenerate_claim_holds(preset: str, host: str) -> None:
    """The shared degenerate cases on a result where every claim holds, at the quick, long and full settings
    and for the LM's non-inferiority (GLA) and gain (FoX, GDN) claims, plus selective-rope's own: a Selective
    RoPE that collapsed to chance on every task while the baselines learned, the LM's RoPE baseline no better
    than the trivial byte model, both LM arms at the trivial level, and both just worse than it.
    ("every arm equal" holds for the non-inferiority claim by its own text: a tie is what it claims.)"""
    import copy

    from iclr26_shared.testing import Arms, assert_no_claim_holds

    good = _results(
        preset,
        state={"nope": 0.5, "rope": 0.6, "selective": 0.99},
        copy={"nope": 0.2, "rope": 0.1, "selective": 0.6},
        mqar={"nope": 0.3, "rope": 0.5, "selective": 0.6},
        lm={"nope": 2.5, "rope": 2.4, "selective": 2.3},
    )
    good["tasks"]["lm"]["settings"]["layer"] = host
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
            trivial=BIGRAM_BPB,
            worse=BIGRAM_BPB + 1.0,
        )
    ]

    def lm(rope: float, sel: float) -> dict[str, Any]:
        out = copy.deepcopy(good)
        out["tasks"]["lm"]["runs"]["rope"]["metric"], out["tasks"]["lm"]["runs"]["selective"]["metric"] = rope, sel
        return out

    collapsed = copy.deepcopy(good)
    for t in ("state", "copy", "mqar"):
        collapsed["tasks"][t]["runs"]["selective"]["metric"] = CHANCE[t]
    collapsed["tasks"]["lm"]["runs"]["selective"]["metric"] = BIGRAM_BPB
    assert_no_claim_holds(
        claims,
        good,
        arms,
        extra_cases={
            "Selective RoPE collapsed to chance": collapsed,
            "LM: RoPE no better than the bigram model": lm(BIGRAM_BPB, 2.3),
            "LM: both arms at the bigram model's level": lm(BIGRAM_BPB, BIGRAM_BPB),
            "LM: both arms at the unigram model's level": lm(UNIGRAM_BPB, UNIGRAM_BPB),
            "LM: both arms a little worse than the bigram model": lm(BIGRAM_BPB + 0.1, BIGRAM_BPB + 0.1),
        },
    )


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
