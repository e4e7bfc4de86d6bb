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

import copy
import time
from typing import Any

import torch

from iclr26_sequence_models.methods.restrain.config import RestrainConfig
from iclr26_sequence_models.methods.restrain.model import build_base, build_task
from iclr26_sequence_models.selfimprove.generation import generate_rollouts
from iclr26_sequence_models.selfimprove.models import Codec
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

__all__ = ["evaluate", "offline_prompt_weights", "rl_step", "run", "variant_settings"]


def variant_settings(variant: str, cfg: RestrainConfig) -> tuple[RestrainSettings | None, bool]:
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
    base: Any, codec: Codec, task: ArithmeticTask, problems: list[Problem], cfg: RestrainConfig, seed: int
) -> list[float]:
    """RESTRAIN's prompt weights ``u_x = g(c_ref / n)``, from ``n`` rollouts of the frozen base model per
    prompt, computed once before training (the paper's offline variant)."""
    out: list[float] = []
    for start in range(0, len(problems), 64):
        part = problems[start : start + 64]
        roll = generate_rollouts(
            base,
            codec,
            [p.prompt for p in part],
            n=cfg.rollouts,
            max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature,
            top_p=cfg.top_p,
            seed=seed + start,
        )
        answers = [task.extract(t) for t in roll.texts]
        out += [prompt_weight(answers[roll.group(p)], cfg.prompt_k, cfg.prompt_sigma) for p in range(len(part))]
    return out


def rl_step(
    policy: Any,
    net: torch.nn.Module,
    ref: Any,
    codec: Codec,
    task: ArithmeticTask,
    problems: list[Problem],
    u: list[float],
    settings: RestrainSettings | None,
    cfg: RestrainConfig,
    opt: torch.optim.Optimizer,
    seed: int,
) -> dict[str, float]:
    """One RL step on ``problems`` (this rank's share): rollouts, label-free targets, ``ppo_epochs`` updates
    of ``mean_x u_x Σ_j w_j L̃_GRPO(x, a_j)``. Returns diagnostics (``gold_reward`` and ``label_acc`` read the
    gold answers for monitoring only; they never enter the loss of a label-free variant)."""
    roll = generate_rollouts(
        policy,
        codec,
        [p.prompt for p in problems],
        n=cfg.rollouts,
        max_new_tokens=cfg.max_new_tokens,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        seed=seed,
    )
    answers = [task.extract(t) for t in roll.texts]
    targets: list[GroupTargets] = []
    gold_reward = label_acc = 0.0
    for p, prob in enumerate(problems):
        group = answers[roll.group(p)]
        scores = [task.score(a, prob) for a in group]
        gold_reward += sum(scores) / len(scores)
        if settings is None:
            targets.append(gold_targets(scores, cfg.adv_eps))
        else:
            t = restrain_targets(group, settings, cfg.adv_eps)
            label_acc += task.score(t.majority, prob)
            targets.append(t)
    mask = roll.completion_mask.float()
    device = roll.sequences.device
    ref_logp = None
    with torch.no_grad():
        old = token_logprobs(policy, roll.sequences, roll.attention_mask, roll.prompt_len, temperature=cfg.temperature)
        if cfg.kl_beta > 0:
            ref_logp = token_logprobs(
                ref, roll.sequences, roll.attention_mask, roll.prompt_len, temperature=cfg.temperature
            )
    policy.train()
    loss_value = 0.0
    for _ in range(cfg.ppo_epochs):
        logp = token_logprobs(net, roll.sequences, roll.attention_mask, roll.prompt_len, temperature=cfg.temperature)
        losses = []
        for p, t in enumerate(targets):
            rows = roll.group(p)
            per_candidate = grpo_loss(
                logp[rows],
                old[rows],
                t.advantages.to(device),
                mask[rows],
                clip_eps=cfg.clip_eps,
                ref_logp=None if ref_logp is None else ref_logp[rows],
                kl_beta=cfg.kl_beta,
            )
            losses.append(u[p] * (t.weights.to(device) * per_candidate).sum())
        loss = torch.stack(losses).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.grad_clip)
        opt.step()
        loss_value = loss.item()
    policy.eval()
    n = len(problems)
    return {
        "loss": loss_value,
        "gold_reward": gold_reward / n,
        "label_acc": label_acc / n if settings is not None else float("nan"),
        "penalised": sum(t.penalised for t in targets) / n,
        "agreement": sum(t.majority_share for t in targets) / n if settings is not None else float("nan"),
        "neg_logp": float(-(old * mask).sum() / mask.sum().clamp(min=1)),
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
    policy = copy.deepcopy(base)
    for p in policy.parameters():
        p.requires_grad_(True)
    net = dist.wrap(policy)
    opt = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, weight_decay=0.0)
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
            diag = rl_step(
                policy,
                net,
                base,
                codec,
                task,
                [train[i] for i in local],
                [u_all[i] if use_u else 1.0 for i in local],
                settings,
                cfg,
                opt,
                seed=run_dir.seed * 100_003 + step * 31 + dist.rank,
            )
            diag = dist.mean(diag)
            history.append(diag)
            if (step + 1) % every == 0 or step + 1 == cfg.steps:
                point = {"step": step + 1, **evaluate(policy, codec, task, curve_set, cfg, run_dir.seed + 17)}
                curve.append(point)
                run_dir.log(step_offset + step + 1, variant=variant, **diag, curve_pass1=point["pass@1"])
            bar.advance(loss=diag["loss"])
    final = evaluate(policy, codec, task, task.splits["test"], cfg, run_dir.seed + 29)
    return {"final": final, "curve": curve, "history": history, "train_seconds": time.perf_counter() - t0}


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
    u_all = offline_prompt_weights(base, codec, task, task.splits[cfg.prompt_source], cfg, run_dir.seed + 5)
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
