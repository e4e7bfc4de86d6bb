"""Benchmarks of the label-free self-improvement pieces (RESTRAIN, Semantic Voting), measured in one process.

* rollout tokens/s (``generate_rollouts``, KV cache) and GRPO training steps/s (log-probs + RESTRAIN loss +
  backward + AdamW step) for the tiny Llama and, without ``--quick``, SmolLM2-135M-Instruct;
* per-item cost of pair construction for N candidate sentences of the ``scenes`` task: Semantic Voting
  (MiniLM embeddings + HDBSCAN + scores) vs self-judging (a forward pass of the N judge prompts through the
  policy; the tiny model and, without ``--quick``, SmolLM2-135M as the judge). Ratio ``sj_over_sv`` > 1 means
  SV is cheaper.

The SmolLM2 case (without ``--quick``) is sized to a few minutes on 2 CPU cores: loading the GGUF
(dequantised, timed apart), 4 chat prompts x 4 rollouts x 32 new tokens, two timed GRPO steps (full
fine-tuning, fp32) after one warm-up, and the judge over 64 candidates.

    uv run python packages/sequence-models/benchmarks/bench_selfimprove.py [--quick] [--out FILE]

Headline numbers are to be measured on an idle machine (or a GPU).
"""

from __future__ import annotations

from typing import Any

import torch

from iclr26_sequence_models.selfimprove.generation import generate_rollouts
from iclr26_sequence_models.selfimprove.models import CharCodec, Codec, load_smollm2, tiny_llama
from iclr26_sequence_models.selfimprove.rl import RestrainSettings, grpo_loss, restrain_targets, token_logprobs
from iclr26_sequence_models.selfimprove.semantic import embed_texts, semantic_vote_pair
from iclr26_sequence_models.selfimprove.tasks import SceneTask, scene_sentences
from iclr26_shared.bench import bench_main, measure

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _policy_case(model: Any, codec: Codec, prompts: list[str], n: int, new_tokens: int, repeats: int) -> dict[str, Any]:
    model.to(DEVICE)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-6)
    holder: dict[str, Any] = {}

    def rollout() -> None:
        holder["roll"] = generate_rollouts(model, codec, prompts, n=n, max_new_tokens=new_tokens, seed=0)

    gen = measure(rollout, repeats=repeats, warmup=1)
    roll = holder["roll"]
    tokens = int(roll.completion_mask.sum())
    answers = [t.strip()[:8] or None for t in roll.texts]

    def step() -> None:
        logp = token_logprobs(model, roll.sequences, roll.attention_mask, roll.prompt_len)
        mask = roll.completion_mask.float()
        losses = []
        for p in range(len(prompts)):
            rows = roll.group(p)
            t = restrain_targets(answers[rows], RestrainSettings(kappa=0))
            per = grpo_loss(logp[rows], logp[rows].detach(), t.advantages.to(DEVICE), mask[rows])
            losses.append((t.weights.to(DEVICE) * per).sum())
        opt.zero_grad(set_to_none=True)
        torch.stack(losses).mean().backward()
        opt.step()

    train = measure(step, repeats=repeats, warmup=1)
    return {
        "rollouts": len(roll.texts),
        "rollout_tokens_per_s": tokens / gen["median_s"],
        "rollout_median_s": gen["median_s"],
        "train_steps_per_s": 1.0 / train["median_s"],
        "train_median_s": train["median_s"],
    }


def _judge_cost(model: Any, codec: Codec, prompt: str, cands: list[str], repeats: int) -> float:
    from iclr26_sequence_models.selfimprove.generation import pack_completions

    @torch.no_grad()
    def judge() -> None:
        seq, att, _, plen = pack_completions(codec, [prompt + c + "?" for c in cands], ["y"] * len(cands), DEVICE)
        model(input_ids=seq[:, :plen], attention_mask=att[:, :plen])

    return measure(judge, repeats=repeats, warmup=1)["median_s"]


def run(quick: bool) -> dict[str, Any]:
    """Policy throughput and pair-construction cost; ``quick``: tiny model only, small batches."""
    results: dict[str, Any] = {"device": str(DEVICE), "threads": torch.get_num_threads()}
    codec = CharCodec("0123456789+-=>? abcdefghijklmnopqrstuvwxyz")
    tiny = tiny_llama(codec.vocab_size, hidden_size=64, max_positions=64, seed=0)
    prompts = ["3+4-2=", "9-1+5=", "7+7+0=", "1-8+3="] * (1 if quick else 4)
    results["tiny"] = _policy_case(tiny, codec, prompts, n=8, new_tokens=4, repeats=2 if quick else 5)
    n = 16 if quick else 64
    # a scene's candidates: its correct wordings and wrong-slot ones (a policy's samples look like this)
    right = scene_sentences("cat", "red", "under", "box")
    wrong = scene_sentences("cat", "red", "under", "bag") + scene_sentences("dog", "red", "in", "box")
    cands = [(right, wrong)[i % 3 == 2][i % 14] for i in range(n)]
    embed_texts(["warm-up"])

    def sv() -> None:
        semantic_vote_pair(cands, embed_texts(cands))

    sv_s = measure(sv, repeats=2 if quick else 5, warmup=1)["median_s"]
    tiny_scene = tiny_llama(CharCodec(SceneTask.ALPHABET).vocab_size, hidden_size=96, max_positions=128, seed=0)
    sj_tiny = _judge_cost(
        tiny_scene.to(DEVICE), CharCodec(SceneTask.ALPHABET), "cat red under box>", cands, 2 if quick else 5
    )
    results["pair_cost_per_item"] = {
        "candidates": n,
        "sv_s": sv_s,
        "sj_tiny_s": sj_tiny,
        "sj_tiny_over_sv": sj_tiny / sv_s,
    }
    if not quick:
        loaded: list[Any] = []  # a one-shot load, timed by the shared clock
        load_s = measure(lambda: loaded.append(load_smollm2(DEVICE)), repeats=1, warmup=0)["median_s"]
        model, hf = loaded[0]
        model.requires_grad_(True)
        chat = ["What is 12 + 7? Reply with the number only.", "What is 30 - 4? Reply with the number only."] * 2
        results["smollm2"] = {"load_s": load_s, **_policy_case(model, hf, chat, n=4, new_tokens=32, repeats=2)}
        judge = "Describe in one sentence: a red cat under a box. Candidate: "
        sj_smol = _judge_cost(model, hf, judge, [c + ". Is this description correct? Answer" for c in cands], 2)
        results["pair_cost_per_item"].update(sj_smollm2_s=sj_smol, sj_smollm2_over_sv=sj_smol / sv_s)
    return results


if __name__ == "__main__":
    raise SystemExit(bench_main("sequence-models-selfimprove", run))
