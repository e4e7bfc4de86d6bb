"""Semantic Voting: clustering, scoring and pairs on constructed embeddings, DPO loss, chrF, the task,
the MiniLM embedder, config, claims and a smoke CLI run."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from iclr26_sequence_models.methods.semantic_voting.claims import claims, report
from iclr26_sequence_models.methods.semantic_voting.config import (
    PRESETS,
    SemanticVotingConfig,
    SemanticVotingTrainConfig,
)
from iclr26_sequence_models.selfimprove.semantic import (
    dpo_loss,
    embed_texts,
    largest_cluster,
    semantic_scores,
    semantic_vote_pair,
)
from iclr26_sequence_models.selfimprove.tasks import (
    NumberWordsTask,
    SceneTask,
    best_chrf,
    chrf,
    number_to_words,
    scene_sentences,
)
from iclr26_shared.errors import ConfigError


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _two_groups(seed: int = 0) -> np.ndarray:
    """8 points around e0, 4 around e1, 2 far away (rows 12, 13); row 0 is exactly e0 (the most central)."""
    rng = np.random.default_rng(seed)
    d = 16
    e0, e1 = np.eye(d)[0], np.eye(d)[1]
    big = e0 + 0.15 * rng.standard_normal((8, d))
    big[0] = e0
    small = e1 + 0.15 * rng.standard_normal((4, d))
    far = rng.standard_normal((2, d)) * 3
    return _unit(np.concatenate([big, small, far])).astype(np.float32)


def test_largest_cluster_and_scores() -> None:
    emb = _two_groups()
    # the official min_samples=2 (the hdbscan package's meaning; its labels on this input, hdbscan 0.8.44:
    # [0]*8 + [1]*4 + [0, 1]) takes the far row 12 into the big cluster; scikit-learn's min_samples=2 does not
    assert set(largest_cluster(emb, min_cluster_size=3, min_samples=2).tolist()) == {*range(8), 12}
    members = largest_cluster(emb, min_cluster_size=3, min_samples=2, min_samples_semantics="sklearn")
    assert set(members.tolist()) == set(range(8))
    scores = semantic_scores(emb, members)
    # the code's centroid-cosine form ranks like the paper's sum of pairwise cosines
    sims = emb[members] @ emb[members].T
    paper = (sims.sum(1) - 1.0) / len(members)
    assert np.array_equal(np.argsort(scores), np.argsort(paper))
    assert members[scores.argmax()] == 0
    # the official code's similarity-as-distance groups differently
    quirk = largest_cluster(
        emb, min_cluster_size=3, min_samples=2, distance="official_quirk", min_samples_semantics="sklearn"
    )
    assert set(quirk.tolist()) != set(range(8))
    assert largest_cluster(emb[:3], min_cluster_size=5).size == 0


def test_semantic_vote_pair_picks_central_vs_peripheral() -> None:
    emb = _two_groups()
    texts = [f"t{i}" for i in range(14)]
    pair = semantic_vote_pair(texts, emb, min_cluster_size=3, filter_length=5, min_samples_semantics="sklearn")
    assert pair is not None and pair.chosen == 0 and pair.rejected in range(1, 8) and pair.cluster_size == 8
    official = semantic_vote_pair(texts, emb, min_cluster_size=3, filter_length=5)
    assert official is not None and official.chosen == 0 and official.cluster_size == 9
    whole = semantic_vote_pair(texts, emb, clustering=False)
    assert whole is not None and whole.rejected in (12, 13)  # without clustering the outliers are rejected
    # invalid candidates (None, empty, non-ASCII) are dropped; too few valid ones skip the item
    few = [None, "", "é", "a", "b", "c", "d", None, None, None, None, None, None, None]
    assert semantic_vote_pair(few, emb, filter_length=5) is None
    with pytest.raises(ValueError, match="14 embeddings"):
        semantic_vote_pair(texts[:3], emb)


def test_exact_duplicates_make_the_cluster_and_give_no_pair() -> None:
    """The diagnosis of the quick preset's few pairs: copies of one string sit at distance 0 (infinite
    HDBSCAN density), so the largest cluster is exactly the copies, every member scores the same and there is
    no (chosen, rejected) pair, although near misses of the string are present; the official code writes the
    tied pair (chosen = rejected) instead, which has zero DPO gradient."""
    rng = np.random.default_rng(0)
    e0 = np.eye(16)[0]
    emb = _unit(np.concatenate([np.tile(e0, (10, 1)), e0 + 0.1 * rng.standard_normal((6, 16))])).astype(np.float32)
    assert set(largest_cluster(emb).tolist()) == set(range(10))
    texts = ["seven"] * 10 + [f"seve{c}" for c in "abcdef"]
    assert semantic_vote_pair(texts, emb) is None
    assert semantic_vote_pair(texts, emb, clustering=False) is not None  # 'whole' keeps the near misses


def test_dpo_loss_sign_and_gradient() -> None:
    z = torch.zeros(3)
    assert dpo_loss(z, z, z, z, beta=0.4).item() == pytest.approx(math.log(2))
    pc = torch.tensor([-1.0, -2.0], requires_grad=True)
    pr = torch.tensor([-3.0, -1.0], requires_grad=True)
    ref = torch.tensor([-2.0, -2.0])
    loss = dpo_loss(pc, pr, ref, ref, beta=0.5)
    loss.backward()
    assert pc.grad is not None and pr.grad is not None
    assert (pc.grad < 0).all() and (pr.grad > 0).all()  # descent raises chosen, lowers rejected
    better = dpo_loss(pc.detach() + 1, pr.detach(), ref, ref, beta=0.5)
    assert better.item() < loss.item()


def test_dpo_step_on_a_fixed_pair_raises_the_chosen_margin() -> None:
    """One DPO step of :func:`dpo_train` on a tiny Llama and one fixed pair raises the implicit reward margin
    ``(log π(y_c) − log π_ref(y_c)) − (log π(y_r) − log π_ref(y_r))`` above 0; the swapped pair lowers it."""
    from iclr26_sequence_models.methods.semantic_voting.train import _seq_logps, dpo_train
    from iclr26_sequence_models.selfimprove.models import CharCodec, tiny_llama
    from iclr26_shared.distributed import DistContext

    codec = CharCodec(NumberWordsTask.ALPHABET)
    base = tiny_llama(codec.vocab_size, hidden_size=32, num_layers=1, num_heads=2, max_positions=48, seed=0)
    base.eval()
    cfg = SemanticVotingConfig(lr=1e-3, epochs=1, batch_size=1, warmup=0.0)
    pair = ("347>", "three hundred forty seven", "three hundred forty eight")
    before = [t.clone() for t in base.state_dict().values()]

    def margin(policy: Any, c: str, r: str) -> float:
        with torch.no_grad():
            lp = [_seq_logps(m, codec, [pair[0]], [y], mean=False).item() for m in (policy, base) for y in (c, r)]
        return (lp[0] - lp[2]) - (lp[1] - lp[3])

    policy, losses = dpo_train(base, codec, [pair], cfg, seed=0, dist=DistContext())
    assert losses[0] == pytest.approx(math.log(2), abs=1e-5)  # policy = reference at the first step
    assert margin(policy, pair[1], pair[2]) > 1e-3
    swapped, _ = dpo_train(base, codec, [(pair[0], pair[2], pair[1])], cfg, seed=0, dist=DistContext())
    assert margin(swapped, pair[1], pair[2]) < -1e-3
    # the reference (base) is never stepped: dpo_train trains a copy
    assert all(torch.equal(a, b) for a, b in zip(before, base.state_dict().values(), strict=True))


def test_gold_and_random_pairs() -> None:
    """The controlled check's pairs: gold = closest vs farthest candidate to the reference (chrF); random = two
    distinct candidates of the same prompts (same count); prompts with one distinct answer give none."""
    from iclr26_sequence_models.methods.semantic_voting.train import build_pairs

    prompts = ["1>", "2>", "3>"]
    refs = {"1>": ("one",), "2>": ("two",), "3>": ("three", "tree")}
    cands = [["one", "one", "oone", "nine"], ["two"] * 4, ["three", "thre", "three", "tree"]]
    cfg = SemanticVotingConfig(samples=4, filter_length=2, min_cluster_size=2)
    gold, _ = build_pairs("gold", None, None, prompts, cands, cfg, {}, refs)  # type: ignore[arg-type]
    assert gold == [("1>", "one", "nine"), ("3>", "three", "thre")]  # "tree" is a correct answer too
    rnd, _ = build_pairs("random", None, None, prompts, cands, cfg, {}, refs, seed=1)  # type: ignore[arg-type]
    assert [p for p, _, _ in rnd] == ["1>", "3>"]
    assert all(c != r and {c, r} <= set(cands[prompts.index(p)]) for p, c, r in rnd)
    with pytest.raises(ValueError, match="references"):
        build_pairs("gold", None, None, prompts, cands, cfg, {})  # type: ignore[arg-type]
    shared: dict[str, Any] = {}  # a run's cache: the gold pairs are built once for both controls
    assert build_pairs("gold", None, None, prompts, cands, cfg, shared, refs)[0] == gold  # type: ignore[arg-type]
    again, _ = build_pairs("random", None, None, prompts, cands, cfg, shared, refs, seed=1)  # type: ignore[arg-type]
    assert again == rnd and shared["gold"][0] == gold


def test_sv_variants_share_one_embedding_pass_of_distinct_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """``sv``, ``flipped`` and ``sv_whole`` embed each distinct candidate once (one call for all three), copies
    get the same row, and each variant's pairs equal ``semantic_vote_pair`` on the per-candidate embeddings;
    each SV variant's reported cost includes the shared embedding pass."""
    from iclr26_sequence_models.methods.semantic_voting import train

    calls: list[list[str]] = []
    vectors = {"a1": [1, 0, 0], "a2": [0.99, 0.14, 0], "a3": [0.98, 0.2, 0], "a4": [0.97, 0.24, 0]}
    vectors.update({"a5": [0.96, 0.27, 0.05], "z": [0, 0, 1], "y": [0, 1, 0], "x": [0.5, 0, 0.86]})

    def fake_embed(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        vec = np.array([vectors.get(t, [1, 1, 1]) for t in texts], dtype=np.float32)
        return vec / np.linalg.norm(vec, axis=-1, keepdims=True)

    monkeypatch.setattr(train, "embed_texts", fake_embed)
    prompts = ["p1>", "p2>"]
    cands = [["a1", "a2", "a1", "a3", "a4", "z", "a2", "y"], ["a3", "a4", "a5", "a2", "a4", "x", "y", "a5"]]
    cfg = SemanticVotingConfig(samples=8, filter_length=2, min_cluster_size=2)
    cache: dict[str, Any] = {}
    sv, sv_s = train.build_pairs("sv", None, None, prompts, cands, cfg, cache)  # type: ignore[arg-type]
    flipped, _ = train.build_pairs("flipped", None, None, prompts, cands, cfg, cache)  # type: ignore[arg-type]
    whole, whole_s = train.build_pairs("sv_whole", None, None, prompts, cands, cfg, cache)  # type: ignore[arg-type]
    distinct = list(dict.fromkeys(c for cs in cands for c in cs))
    assert calls[1:] == [distinct]  # calls[0]: the embedder's warm-up
    emb, embed_s = cache["embeddings"]
    assert emb.shape == (2, 8, 3) and np.array_equal(emb[0, 0], emb[0, 2]) and np.array_equal(emb[1, 1], emb[1, 4])
    for got, clustering in ((sv, True), (whole, False)):
        want = []
        for prompt, cs in zip(prompts, cands, strict=True):
            pair = semantic_vote_pair(cs, fake_embed(cs), min_cluster_size=2, filter_length=2, clustering=clustering)
            if pair is not None and cs[pair.chosen] != cs[pair.rejected]:
                want.append((prompt, cs[pair.chosen], cs[pair.rejected]))
        assert got == want and len(got) == 2
    assert flipped == [(p, r, c) for p, c, r in sv]
    assert sv_s >= embed_s and whole_s >= embed_s


def test_self_scorers_score_each_distinct_candidate_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``em`` / ``sj`` score a prompt's distinct strings once; copies take their string's score, so the pair is
    the one scoring every sample would give (best and worst valid strings)."""
    from iclr26_sequence_models.methods.semantic_voting import train

    seen: list[list[str]] = []

    def fake_scores(model: Any, codec: Any, prompt: str, cands: list[str]) -> list[float]:
        seen.append(list(cands))
        return [float(len(c)) for c in cands]

    monkeypatch.setattr(train, "confidence_scores", fake_scores)
    monkeypatch.setattr(train, "judge_scores", fake_scores)
    cands = [["bb", "a", "bb", "ccc", "a"], ["x", "x", "x", "x", "x"]]
    cfg = SemanticVotingConfig(samples=5, filter_length=2, min_cluster_size=2)
    for variant in ("em", "sj"):
        seen.clear()
        pairs, _ = train.build_pairs(variant, None, None, ["p>", "q>"], cands, cfg, {})  # type: ignore[arg-type]
        assert seen == [["bb", "a", "ccc"], ["x"]]
        assert pairs == [("p>", "ccc", "a")]  # one distinct string (q>): no pair


def test_within_prompt_auc_against_sklearn() -> None:
    """The scorer diagnostic: per prompt, the AUC of right vs wrong distinct valid candidates (scikit-learn's
    ``roc_auc_score``, ties half), averaged over prompts that have both; invalid strings and one-sided prompts
    do not count."""
    from sklearn.metrics import roc_auc_score

    from iclr26_sequence_models.methods.semantic_voting.train import within_prompt_auc

    scores = [
        {"a": 3.0, "b": 1.0, "c": 2.0, "": 9.0, "\u00e9": -9.0},  # "" and a non-ASCII string are invalid
        {"p": 1.0, "q": 2.0},  # every candidate right: no AUC
        {"x": 2.0, "y": 1.0, "z": 2.0, "w": 0.5},
    ]
    right = [{"a", "b", ""}, {"p", "q"}, {"x", "w"}]
    want = [roc_auc_score([1, 1, 0], [3.0, 1.0, 2.0]), roc_auc_score([1, 0, 0, 1], [2.0, 1.0, 2.0, 0.5])]
    auc, counted = within_prompt_auc(scores, right)
    assert counted == 2 and auc == pytest.approx(np.mean(want)) and want == [0.5, 0.375]
    assert within_prompt_auc([{"p": 1.0}], [set()]) == (pytest.approx(float("nan"), nan_ok=True), 0)
    assert within_prompt_auc([{"r": 2.0, "w": 1.0}], [{"r"}]) == (1.0, 1)


def test_cost_judge_is_the_smallest_llama_with_the_embedders_parameters() -> None:
    """The cost claim's judge has at least all-MiniLM-L6-v2's parameters, and one layer fewer would not."""
    from iclr26_sequence_models.methods.semantic_voting.train import COST_JUDGE_HEADS, COST_JUDGE_HIDDEN, cost_judge
    from iclr26_sequence_models.selfimprove.models import CharCodec, tiny_llama
    from iclr26_sequence_models.selfimprove.semantic import MINILM_PARAMS

    vocab = CharCodec(SceneTask.ALPHABET).vocab_size
    judge: Any = cost_judge(vocab, 96)
    layers = int(judge.config.num_hidden_layers)
    assert sum(p.numel() for p in judge.parameters()) >= MINILM_PARAMS == 22_713_216
    fewer = tiny_llama(vocab, hidden_size=COST_JUDGE_HIDDEN, num_layers=layers - 1, num_heads=COST_JUDGE_HEADS)
    assert sum(p.numel() for p in fewer.parameters()) < MINILM_PARAMS
    assert judge.config.hidden_size == 384 and layers == 16


def test_chrf_and_number_words() -> None:
    assert chrf("three hundred", "three hundred") == pytest.approx(1.0)
    assert chrf("xyz", "abc") == 0.0
    assert 0.3 < chrf("three hundred forty", "three hundred forty seven") < 1.0
    assert number_to_words(347) == "three hundred forty seven" and number_to_words(0) == "zero"
    assert number_to_words(12019) == "twelve thousand nineteen" and number_to_words(90) == "ninety"
    task = NumberWordsTask(digits=2, sizes={"pretrain": 50, "train": 20, "test": 30}, seed=1)
    prompts = [{it.prompt for it in task.splits[s]} for s in ("pretrain", "train", "test")]
    assert sum(map(len, prompts)) == 100 and not (prompts[0] & prompts[2])
    with pytest.raises(ValueError, match="only 100 numbers"):
        NumberWordsTask(digits=2, sizes={"train": 101}, seed=0)


def test_scene_task_has_many_correct_wordings() -> None:
    """The scenes task: every scene has 14-21 distinct correct sentences carrying the same slots, splits are
    disjoint, pre-training draws several wordings per scene, and the metrics read all correct wordings."""
    under = scene_sentences("cat", "red", "under", "box")
    assert len(under) == len(set(under)) == 21 and under[0] == "the red cat is under the box"
    assert "beneath the box is a red cat" in under and "a red cat waits below the box" in under
    assert len(scene_sentences("cat", "red", "in", "box")) == 14
    assert all({"cat", "red", "box"} <= set(s.split()) for s in under)
    task = SceneTask(sizes={"pretrain": 30, "train": 10, "test": 20}, seed=3, renderings=4)
    prompts = [{it.prompt for it in task.splits[s]} for s in ("pretrain", "train", "test")]
    assert [len(p) for p in prompts] == [30, 10, 20] and not (prompts[0] & prompts[2]) and not (prompts[1] & prompts[2])
    pairs = task.pretrain_pairs()
    assert len(pairs) == 120 and len(set(pairs)) == 120  # 4 distinct wordings per scene
    refs = {it.prompt: it.references for it in task.splits["pretrain"]}
    assert all(t in refs[p] for p, t in pairs)
    assert set(SceneTask.ALPHABET) >= {c for it in task.splits["test"] for r in (it.prompt, *it.references) for c in r}
    # multi-reference metrics: any correct wording scores 1; a wrong slot does not
    assert best_chrf("beneath the box is a red cat", under) == pytest.approx(1.0)
    assert chrf("beneath the box is a red cat", under[0]) < 0.9
    assert best_chrf("beneath the box is a red dog", under) < 0.9
    assert best_chrf("seven", "seven") == pytest.approx(1.0)  # a plain string is one reference
    with pytest.raises(ValueError, match="4608 scenes"):
        SceneTask(sizes={"train": 5000}, seed=0)


def test_minilm_embeddings_are_semantic() -> None:
    emb = embed_texts(["The answer is 42.", "It equals forty-two.", "Paris is the capital of France."])
    assert emb.shape == (3, 384) and np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.3


def test_config_validation() -> None:
    with pytest.raises(ConfigError, match="filter_length"):
        SemanticVotingConfig(samples=4, filter_length=5, min_cluster_size=2)
    with pytest.raises(ConfigError, match="digits"):
        SemanticVotingConfig(task="number_words", digits=2)
    SemanticVotingConfig(digits=2)  # digits only bounds number_words
    with pytest.raises(ConfigError, match="n_test"):
        SemanticVotingConfig(n_test=5000)
    with pytest.raises(ConfigError, match="task"):
        SemanticVotingConfig(task="translation")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="variants"):
        SemanticVotingConfig(variants=())
    with pytest.raises(ConfigError, match="distance"):
        SemanticVotingConfig(distance="euclid")  # type: ignore[arg-type]


def test_library_config_has_no_task_checks() -> None:
    """The task-size rules are the experiment's; the library object keeps only the vote's own (issue 53)."""
    lib = SemanticVotingTrainConfig(samples=4096, filter_length=5, min_cluster_size=5, dpo_beta=0.1)
    assert (lib.samples, lib.beta) == (4096, 0.1)  # ``beta``: TRL DPOConfig's name
    with pytest.raises(ConfigError, match="filter_length"):
        SemanticVotingTrainConfig(samples=4, filter_length=5, min_cluster_size=2)
    with pytest.raises(ConfigError, match="min_cluster_size"):
        SemanticVotingTrainConfig(samples=4, filter_length=2, min_cluster_size=5)
    train_fields = {f.name for f in dataclasses.fields(SemanticVotingTrainConfig)}
    assert not {"task", "n_test", "n_train", "n_pretrain", "digits", "tiny_hidden", "variants"} & train_fields
    assert isinstance(PRESETS["quick"], SemanticVotingTrainConfig)


def _results(
    chrf_: dict[str, float], base: float = 0.5, chance: float = 0.2, sv_s: float = 0.01, sj_s: float = 0.1
) -> dict[str, Any]:
    variants = {
        v: {
            "final": {"chrf": x, "exact": x / 2},
            "pairs": 10,
            "chosen_exact": 0.5,
            "rejected_exact": 0.1,
            "pair_seconds_per_item": sv_s if v.startswith("sv") or v == "flipped" else sj_s,
        }
        for v, x in chrf_.items()
    }
    return {
        "base": {"final": {"chrf": base, "exact": base / 2}, "sample_exact": 0.3},
        "variants": variants,
        "chance_chrf": chance,
        "settings": {
            "task": "t",
            "samples": 16,
            "n_train": 10,
            "distance": "cosine",
            "dpo_beta": 0.4,
            "lr": 1e-4,
            "epochs": 4,
        },
    }


def _cost(sv_s: float, judge_s: float, judge_params: int = 23_621_760) -> dict[str, Any]:
    """A run's ``cost`` section (the pair-construction timing in the paper's regime)."""
    return {
        "prompts": 8,
        "distinct_candidates": 200,
        "judge_params": judge_params,
        "judge_layers": 16,
        "embedder_params": 22_713_216,
        "policy_params": 188_832,
        "judge_seconds_per_item": judge_s,
        "policy_judge_seconds_per_item": 0.01,
        "sv_seconds_per_item": sv_s,
    }


def test_claims_hold_fail_and_chance() -> None:
    good = _results({"sv": 0.6, "flipped": 0.4, "sj": 0.45, "em": 0.55, "gold": 0.7, "random": 0.5})
    assert [c.verdict for c in claims(good)] == ["holds"] * 4  # no cost claim: no cost measured
    assert [c.verdict for c in claims({**good, "cost": _cost(0.1, 1.0)})] == ["holds"] * 5
    # a judge smaller than the embedder (the tiny policy's 0.2M against MiniLM's 22.7M) gives no cost claim,
    # however cheap SV is against it; the run's own sj seconds never enter the claim
    assert claims({**good, "cost": _cost(0.1, 1.0, judge_params=200_000)}) == claims(good)
    assert claims({**good, "params": {"judge": 10**9, "embedder": 22_713_216}}) == claims(good)
    bad = _results({"sv": 0.45, "flipped": 0.55, "sj": 0.5, "em": 0.46, "gold": 0.5, "random": 0.5}, sv_s=0.2, sj_s=0.1)
    assert [c.verdict for c in claims({**bad, "cost": _cost(0.6, 1.0)})] == ["fails"] * 5
    # degenerate costs: SV as dear as the judge, or a judge that took no time, never hold
    for cost in (_cost(1.0, 1.0), _cost(0.0, 0.0), _cost(0.1, 0.0)):
        assert not claims({**good, "cost": cost})[-1].holds
    # wins inside the noise-sized margins (0.02 chrF) do not hold; flipped is judged against random pairs,
    # so DPO damage that random pairs do too (flipped 0.45 vs random 0.46, both far below the base) fails
    close = _results({"sv": 0.51, "flipped": 0.45, "em": 0.5, "gold": 0.47, "random": 0.46})
    assert [c.verdict for c in claims(close)] == ["fails"] * 4
    at_chance = _results(
        {"sv": 0.2, "flipped": 0.2, "sj": 0.2, "em": 0.2, "gold": 0.2, "random": 0.2}, base=0.2, sv_s=0.1, sj_s=0.1
    )
    assert not any(c.holds for c in claims(at_chance))
    assert re.search(r"\| sv +\| 0\.6000 ", report(good))


def test_semantic_voting_smoke_saves_policies_and_no_degenerate_claim_holds(tmp_path: Path) -> None:
    """Smoke run (shared runner): pairs, claims, saved policies load back bit for bit; no claim holds on the
    degenerate versions of its results, nor when DPO damages flipped and random pairs alike."""
    import copy

    from iclr26_sequence_models.methods.semantic_voting.spec import SPEC
    from iclr26_shared.testing import Arms, assert_models_roundtrip, assert_no_claim_holds, smoke_run

    run, results = smoke_run(SPEC, tmp_path, variants=("sv", "flipped", "random"))
    assert set(results["variants"]) == {"sv", "flipped", "random"}
    sv, fl = results["variants"]["sv"], results["variants"]["flipped"]
    assert sv["pairs"] == fl["pairs"] and [e[1] for e in sv["examples"]] == [e[2] for e in fl["examples"]]
    assert 0.0 <= results["base"]["final"]["chrf"] <= 1.0 and results["base"]["final"]["chrf_se"] >= 0.0
    # sv vs base, flipped vs random, and the cost claim with a judge of >= the embedder's parameters (the
    # policy itself is far smaller)
    cost = results["cost"]
    assert len(results["claims"]) == 3 and results["params"]["judge"] < results["params"]["embedder"]
    assert cost["judge_params"] >= cost["embedder_params"] > 100 * cost["policy_params"] and cost["prompts"] == 2
    assert cost["judge_seconds_per_item"] > cost["policy_judge_seconds_per_item"] > 0 < cost["sv_seconds_per_item"]
    assert PRESETS["smoke"].samples < PRESETS["quick"].samples
    ids = torch.tensor([[1, 5, 6, 7, 8]])
    assert_models_roundtrip(run, {v: (lambda m: m(input_ids=ids).logits) for v in results["variants"]})

    good = {**_results({"sv": 0.6, "flipped": 0.4, "em": 0.55, "gold": 0.7, "random": 0.5}), "cost": _cost(0.1, 1.0)}
    assert all(c.holds for c in claims(good))  # the smoke run's tiny numbers may tie: start from wins
    arms = [
        Arms(
            ours=["variants/sv/final/chrf"],
            others=[
                "base/final/chrf",
                "variants/em/final/chrf",
                "variants/flipped/final/chrf",
                "variants/random/final/chrf",
                "variants/gold/final/chrf",
            ],
            trivial=good["chance_chrf"],
            worse=0.0,
        ),
        Arms(ours=["cost/sv_seconds_per_item"], others=["cost/judge_seconds_per_item"], trivial=1.0),
    ]
    damage = copy.deepcopy(good)  # DPO damages the policy whatever the pairs: flipped = random, far below base
    low = good["base"]["final"]["chrf"] - 0.2
    for v in ("flipped", "random", "gold"):
        damage["variants"][v]["final"]["chrf"] = low
    no_pairs = copy.deepcopy(good)  # no pair at all: every policy is the base model
    for v in no_pairs["variants"].values():
        v["final"] = dict(good["base"]["final"])
    assert_no_claim_holds(
        SPEC, good, arms, extra_cases={"DPO damage on any pairs": damage, "no pairs (policies = base)": no_pairs}
    )
