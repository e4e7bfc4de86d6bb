"""The label-free RL library: votes, RESTRAIN weights and targets, GRPO loss, log-probs, generation, tasks."""

from __future__ import annotations

import math

import pytest
import torch

from iclr26_sequence_models.selfimprove.generation import generate_rollouts
from iclr26_sequence_models.selfimprove.models import CharCodec, tiny_llama
from iclr26_sequence_models.selfimprove.rl import (
    RestrainSettings,
    gold_targets,
    group_advantages,
    grpo_loss,
    prompt_weight,
    restrain_targets,
    token_logprobs,
)
from iclr26_sequence_models.selfimprove.tasks import ArithmeticTask, extract_answer
from iclr26_sequence_models.selfimprove.voting import (
    gaussian_shape,
    majority_vote,
    pseudo_label_weights,
    vote_stats,
)

ANSWERS = ["3", "3", "5", None, "3", "7", "5", "3"]  # n = 8: "3" x4, "5" x2, "7" x1, one unparsable


def test_vote_stats_and_majority() -> None:
    v = vote_stats(ANSWERS)
    assert v.candidates == ("3", "5", "7") and v.counts == (4, 2, 1) and v.n == 8
    assert v.shares == (0.5, 0.25, 0.125) and v.majority_count == 4
    assert majority_vote(ANSWERS) == ("3", 0.5)
    assert vote_stats([None, None]).majority is None and vote_stats([None, None]).majority_count == 0
    with pytest.raises(ValueError, match="empty rollout group"):
        vote_stats([])


def test_pseudo_label_weights_limits() -> None:
    shares = [0.5, 0.25, 0.125]
    w = pseudo_label_weights(shares, k=1.0, sigma=0.3)
    assert math.isclose(sum(w), 1.0) and w[0] > w[1] > w[2] > 0
    # Gaussian form: w_j ∝ exp(-(f_j - k)^2 / 2σ^2)
    assert math.isclose(w[0] / w[1], gaussian_shape(0.5, 1.0, 0.3) / gaussian_shape(0.25, 1.0, 0.3))
    assert pseudo_label_weights(shares, k=1.0, sigma=0.0) == [1.0, 0.0, 0.0]  # σ → 0, k = 1: TTRL's label
    tiny = pseudo_label_weights(shares, k=1.0, sigma=1e-3)
    assert tiny[0] == pytest.approx(1.0) and tiny[1] == pytest.approx(0.0)
    wide = pseudo_label_weights(shares, k=1.0, sigma=100.0)
    assert max(wide) - min(wide) < 1e-3  # large σ: near-uniform
    assert pseudo_label_weights([0.5, 0.5], k=1.0, sigma=0.0) == [0.5, 0.5]  # a tie splits evenly
    assert pseudo_label_weights([0.5, 0.25], k=0.25, sigma=0.05)[1] > 0.99  # the centre k picks the share


def test_group_advantages_zero_when_all_agree() -> None:
    assert torch.equal(group_advantages(torch.ones(2, 6)), torch.zeros(2, 6))
    a = group_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]))
    assert a.sum().abs() < 1e-6 and a[0] > 0 > a[1]
    with pytest.raises(ValueError, match="at least 2 rollouts"):
        group_advantages(torch.ones(1))


def test_restrain_targets_nrp_and_reductions() -> None:
    s = RestrainSettings(k=1.0, sigma=0.3, kappa=3, delta=0.5)
    t = restrain_targets(ANSWERS, s)
    assert t.advantages.shape == (3, 8) and not t.penalised and t.majority == "3"
    assert torch.allclose(t.weights, torch.tensor(pseudo_label_weights([0.5, 0.25, 0.125], 1.0, 0.3)))
    # all rollouts agree: every advantage is zero
    agree = restrain_targets(["4"] * 6, s)
    assert torch.equal(agree.advantages, torch.zeros(1, 6))
    # majority count 2 < κ = 3: all-negative update with offset δ
    low = restrain_targets(["1", "1", "2", "3", None, "4"], s)
    assert low.penalised and torch.equal(low.advantages, torch.full((1, 6), -0.5))
    # κ = 0 disables NRP
    no_nrp = restrain_targets(["1", "1", "2", "3", None, "4"], RestrainSettings(kappa=0))
    assert not no_nrp.penalised and no_nrp.advantages.shape[0] == 4
    # no parsable answer: penalised with κ > 0, zero advantages with κ = 0
    assert restrain_targets([None] * 4, s).penalised
    assert torch.equal(restrain_targets([None] * 4, RestrainSettings(kappa=0)).advantages, torch.zeros(1, 4))
    # σ → 0, k = 1, κ = 0 is TTRL: rewards 1[ans = majority]
    ttrl = restrain_targets(ANSWERS, RestrainSettings.ttrl())
    expect = group_advantages(torch.tensor([[1.0 if a == "3" else 0.0 for a in ANSWERS]]))
    assert torch.allclose(ttrl.advantages, expect) and torch.equal(ttrl.weights, torch.ones(1))
    gold = gold_targets([1.0, 0.0, 1.0, 0.0])
    assert torch.allclose(gold.advantages, group_advantages(torch.tensor([[1.0, 0.0, 1.0, 0.0]])))


def test_restrain_targets_report_how_much_weight_the_majority_gets() -> None:
    """The diagnostics of how often PLW and NRP act: answers 1,1,1,2 at sigma 0.3 give the majority
    g(3/4) / (g(3/4) + g(1/4)) of the weight, g(f) = exp(-(f - 1)^2 / 0.18); TTRL gives it all (also on a
    tie, split between the tied answers); a penalised group has no pseudo-label weights (NaN)."""
    g = [math.exp(-((f - 1.0) ** 2) / 0.18) for f in (0.75, 0.25)]
    t = restrain_targets(["1", "1", "1", "2"], RestrainSettings(k=1.0, sigma=0.3, kappa=2))
    assert t.majority_weight == pytest.approx(g[0] / sum(g), abs=1e-6) and g[0] / sum(g) == pytest.approx(
        0.9415, abs=1e-4
    )
    assert t.minority_weight == pytest.approx(g[1] / sum(g), abs=1e-6) and t.n_candidates == 2
    tie = restrain_targets(["1", "1", "2", "2"], RestrainSettings.ttrl())
    assert tie.majority_weight == 1.0 and tie.minority_weight == 0.0 and tie.n_candidates == 2
    low = restrain_targets(["1", "2", "3", None], RestrainSettings(kappa=2))
    assert low.penalised and math.isnan(low.majority_weight) and low.n_candidates == 3


def test_prompt_weight_is_gaussian_of_reference_majority() -> None:
    assert prompt_weight(ANSWERS, 1.0, 0.3) == pytest.approx(math.exp(-(0.5**2) / (2 * 0.09)))
    assert prompt_weight(["2"] * 8, 1.0, 0.3) == pytest.approx(1.0)


def test_grpo_loss_by_hand() -> None:
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    old = torch.zeros(2, 2)
    # rollout 0: ratio 1.5 (clipped to 1.2 for A = +1); rollout 1: ratio 0.5 (A = -1: min(-0.5, -0.8) = -0.8)
    logp = torch.tensor([[math.log(1.5), math.log(1.5)], [math.log(0.5), 7.0]])
    loss = grpo_loss(logp, old, torch.tensor([1.0, -1.0]), mask, clip_eps=0.2)
    assert loss.item() == pytest.approx(((-1.2) + 0.8) / 2)
    # per-candidate losses [m, n] in one call
    both = grpo_loss(logp, old, torch.tensor([[1.0, -1.0], [-1.0, 1.0]]), mask, clip_eps=0.2)
    assert both.shape == (2,) and both[0].item() == pytest.approx(loss.item())
    assert both[1].item() == pytest.approx((1.5 + (-0.5)) / 2)  # A=-1, ρ=1.5: max(1.5,1.2); A=+1, ρ=0.5: min
    # Σ_j w_j L(A_j) differs from L(Σ_j w_j A_j) once the clip is active (why RESTRAIN loops over candidates)
    mixed = grpo_loss(logp, old, torch.tensor([0.0, 0.0]), mask, clip_eps=0.2)
    assert abs(0.5 * both.sum().item() - mixed.item()) > 0.1
    # KL: zero at the reference, positive elsewhere
    assert grpo_loss(logp, old, torch.zeros(2), mask, ref_logp=logp, kl_beta=1.0).item() == pytest.approx(0.0)
    assert grpo_loss(logp, old, torch.zeros(2), mask, ref_logp=old, kl_beta=1.0).item() > 0
    with pytest.raises(ValueError, match="needs ref_logp"):
        grpo_loss(logp, old, torch.zeros(2), mask, kl_beta=0.1)
    with pytest.raises(ValueError, match="same"):
        grpo_loss(logp, old[:1], torch.zeros(2), mask)


def test_grpo_gradient_raises_rewarded_action() -> None:
    """A categorical toy policy: GRPO steps with reward 1[action = 0] increase p(0)."""
    torch.manual_seed(0)
    theta = torch.zeros(4, requires_grad=True)
    opt = torch.optim.SGD([theta], lr=0.5)
    for _ in range(20):
        actions = torch.multinomial(torch.softmax(theta.detach(), -1), 8, replacement=True)
        if (actions == 0).all() or (actions != 0).all():
            continue
        adv = group_advantages((actions == 0).float())
        logp = torch.log_softmax(theta, -1)[actions].unsqueeze(-1)
        loss = grpo_loss(logp, logp.detach(), adv, torch.ones_like(logp))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert torch.softmax(theta, -1)[0] > 0.6


def _tiny() -> tuple[torch.nn.Module, CharCodec]:
    codec = CharCodec(ArithmeticTask.ALPHABET)
    return tiny_llama(codec.vocab_size, hidden_size=32, max_positions=24, seed=3), codec


def test_generation_is_seeded_and_logprobs_match_generate() -> None:
    model, codec = _tiny()
    prompts = ["1+2=", "33-4+5="]
    a = generate_rollouts(model, codec, prompts, n=3, max_new_tokens=4, seed=5)
    b = generate_rollouts(model, codec, prompts, n=3, max_new_tokens=4, seed=5)
    c = generate_rollouts(model, codec, prompts, n=3, max_new_tokens=4, seed=6)
    assert torch.equal(a.sequences, b.sequences) and a.texts == b.texts
    assert not torch.equal(a.sequences, c.sequences)
    assert a.sequences.shape[0] == 6 and a.completion_mask.shape == (6, a.sequences.shape[1] - a.prompt_len)
    # token_logprobs (left padding, position ids from the mask) equals generate's own scores
    out = model.generate(  # type: ignore[operator]
        input_ids=a.sequences[:, : a.prompt_len],
        attention_mask=a.attention_mask[:, : a.prompt_len],
        max_new_tokens=4,
        do_sample=False,
        output_logits=True,
        return_dict_in_generate=True,
        pad_token_id=codec.pad_id,
        eos_token_id=codec.eos_id,
    )
    gen = out.sequences[:, a.prompt_len :]
    full_mask = torch.cat([a.attention_mask[:, : a.prompt_len], torch.ones_like(gen)], 1)
    with torch.no_grad():
        ours = token_logprobs(model, out.sequences, full_mask, a.prompt_len)
    theirs = torch.stack(out.logits, 1).log_softmax(-1).gather(-1, gen.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(ours, theirs, atol=1e-5)


def test_generation_bad_inputs() -> None:
    model, codec = _tiny()
    with pytest.raises(ValueError, match="no prompts"):
        generate_rollouts(model, codec, [], n=2, max_new_tokens=2)
    with pytest.raises(ValueError, match="exceeds the model context of 24"):
        generate_rollouts(model, codec, ["1+2+3+4+5+6+7+8+9+1="], n=2, max_new_tokens=8)
    with pytest.raises(ValueError, match="not in the alphabet"):
        generate_rollouts(model, codec, ["what?"], n=2, max_new_tokens=2)


def test_extract_answer() -> None:
    assert extract_answer("14", "compact") == "14" and extract_answer("-07", "compact") == "-7"
    assert extract_answer("1+", "compact") is None and extract_answer("", "compact") is None
    assert extract_answer("We get 3, so Answer: 12", "chat") == "12"
    assert extract_answer("the answer is \\boxed{-5}.", "chat") == "-5"
    assert extract_answer("5 plus 6 makes 11", "chat") == "11" and extract_answer("no idea", "chat") is None


def test_arithmetic_task_splits_are_disjoint_and_graded() -> None:
    task = ArithmeticTask(terms=2, digits=1, sizes={"pretrain": 40, "train": 20, "test": 20}, seed=0)
    prompts = [{p.prompt for p in task.splits[s]} for s in ("pretrain", "train", "test")]
    assert all(len(p) == n for p, n in zip(prompts, (40, 20, 20), strict=True))
    assert not (prompts[0] & prompts[2]) and not (prompts[1] & prompts[2]) and not (prompts[0] & prompts[1])
    prob = task.splits["test"][0]
    assert eval(prob.prompt[:-1]) == int(prob.answer)  # noqa: S307 - our own generated arithmetic
    assert task.score(prob.answer, prob) == 1.0 and task.score(str(int(prob.answer) + 1), prob) == 0.0
    assert task.score(None, prob) == 0.0
    # reasoning-gym pays a wrong answer that contains the gold digits (gold 3: "13" -> 0.5); we grade exactly
    near_miss = "1" + prob.answer.lstrip("-")
    assert task.score(near_miss, prob) == 0.0
    assert task.score(f"+0{prob.answer}.00" if not prob.answer.startswith("-") else prob.answer + ".0", prob) == 1.0
    with pytest.raises(ValueError, match="distinct"):
        ArithmeticTask(terms=2, digits=1, sizes={"train": 400}, seed=0)


#: reasoning-gym 0.1.25's chain_sum problems (expression, answer) for (seed, terms, digits), drawn with
#: ``reasoning_gym.create_dataset("chain_sum", size=6, seed=seed, min_terms=terms, max_terms=terms,
#: min_digits=digits, max_digits=digits)`` on 2026-12-05 (reasoning-gym is no longer a dependency).
REASONING_GYM_CHAIN_SUM = {
    (0, 2, 1): [("0 - 4", "-4"), ("4 - 1", "3"), ("1 + 5", "6"), ("5 - 9", "-4"), ("1 - 6", "-5"), ("8 - 0", "8")],
    (7, 3, 1): [
        ("6 + 0 - 1", "5"), ("6 + 2 + 3", "11"), ("4 + 2 - 2", "4"), ("7 + 9 - 0", "16"), ("7 + 8 + 9", "24"),
        ("8 - 5 + 2", "5"),
    ],
    (123, 3, 2): [
        ("21 + 62 + 44", "127"), ("32 - 17 - 63", "-48"), ("86 + 48 - 82", "52"), ("41 - 92 - 32", "-83"),
        ("13 + 13 - 44", "-18"), ("75 - 56 + 27", "46"),
    ],
    (5, 4, 3): [
        ("914 + 807 - 961 + 857", "1617"), ("880 + 367 - 137 - 100", "1010"), ("504 + 766 - 149 + 174", "1295"),
        ("484 + 229 + 297 + 821", "1831"), ("373 + 241 - 290 - 987", "-663"), ("594 - 691 - 115 - 311", "-523"),
    ],
}  # fmt: skip


@pytest.mark.parametrize("key", sorted(REASONING_GYM_CHAIN_SUM))
def test_chain_sum_is_reasoning_gyms_generator(key: tuple[int, int, int]) -> None:
    from iclr26_sequence_models.selfimprove.tasks import chain_sum_entry

    seed, terms, digits = key
    got = [
        chain_sum_entry(seed, i, min_terms=terms, max_terms=terms, min_digits=digits, max_digits=digits)
        for i in range(6)
    ]
    assert [(e["metadata"]["expression"], e["answer"]) for e in got] == REASONING_GYM_CHAIN_SUM[key]
    assert (
        got[0]["question"]
        == f"State the final answer to the following arithmetic problem: {got[0]['metadata']['expression']} ="
    )


def test_exact_decimal_match_is_reasoning_gyms_full_credit() -> None:
    from iclr26_sequence_models.selfimprove.tasks import exact_decimal_match

    assert exact_decimal_match("+01,000.00", "1000") and exact_decimal_match("-4", "-4")
    assert not exact_decimal_match("14", "4") and not exact_decimal_match(None, "4")
    assert not exact_decimal_match("", "4") and not exact_decimal_match("four", "4")
