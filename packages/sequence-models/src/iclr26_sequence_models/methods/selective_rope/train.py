"""Training of ``selective-rope``: one run per (task, position), same seed and budget for every position.

Every run trains the ``transformers`` causal LM :class:`~iclr26_sequence_models.nn.hf.SelectiveRopeForCausalLM`
(:func:`~iclr26_sequence_models.methods.selective_rope.model.build_model`; the same modules and initial
weights as the bare ``SequenceModel`` it wraps, so the same steps: tested bit for bit) on the mean
next-token cross-entropy of the task's aligned labels, and is saved with ``save_pretrained``. Each finished
(task, position) run is checkpointed with its results, so ``--resume`` skips finished runs. Learning
curves go to ``metrics.jsonl`` and ``figures/``.

Several processes (``uv run torchrun --nproc-per-node N -m iclr26_sequence_models selective-rope ...``)
train one run together through :mod:`iclr26_shared.distributed`: the model is wrapped in
``DistributedDataParallel``, every rank draws the same seeded global batch and trains on its share
(``batch_size`` must divide by N), and each rank's summed loss is divided by the *global* number of
labelled tokens (times N, as DDP averages gradients), so the update equals the single-process one on
the global batch also where labels are masked (copying, MQAR). Every rank evaluates the same
deterministic sets, so all ranks choose the same sweep candidate; only rank 0 writes files. A single
process takes the plain path and gives the same numbers as before.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F

from iclr26_sequence_models.data.mqar import IGNORE_INDEX
from iclr26_sequence_models.methods.selective_rope.config import SelectiveRopeConfig, TaskSettings
from iclr26_sequence_models.methods.selective_rope.model import build_model
from iclr26_sequence_models.methods.selective_rope.tasks import HIGHER_IS_BETTER, Task, make_task
from iclr26_sequence_models.nn.hf import SelectiveRopeForCausalLM
from iclr26_shared.distributed import DistContext
from iclr26_shared.runs import RunDir
from iclr26_shared.seeding import global_rng

__all__ = ["dry_run", "lr_at", "make_optimizer", "next_token_loss", "run", "sharded_loss", "train_one"]


def make_optimizer(model: torch.nn.Module, lr: float, weight_decay: float, beta2: float = 0.95) -> torch.optim.AdamW:
    """AdamW(β = 0.9, ``beta2``, ε = 1e-8); no decay on 1-d parameters and those marked ``_no_weight_decay``."""
    decay, no_decay = [], []
    for p in model.parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.dim() < 2 or getattr(p, "_no_weight_decay", False) else decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, beta2), eps=1e-8)


def lr_at(step: int, total: int, peak: float, warmup_frac: float, schedule: str = "cosine") -> float:
    """Learning rate of step ``step`` (0-based) of ``total``: linear warm-up over ``warmup_frac`` of the steps
    (at least one), then cosine or linear decay to 0 at ``total``."""
    warm = max(1, int(total * warmup_frac))
    if step < warm:
        return peak * (step + 1) / warm
    progress = min(1.0, (step - warm) / max(1, total - warm))
    if schedule == "linear":
        return peak * (1.0 - progress)
    return peak * 0.5 * (1 + math.cos(math.pi * progress))


def next_token_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of ``logits [B, T, V]`` (in fp32) against ``labels [B, T]``, which the tasks already
    align with the inputs (``labels[:, t]`` is the target of position t; −100 takes no loss)."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX)


def sharded_loss(logits: torch.Tensor, labels: torch.Tensor, n_labelled: int, world_size: int) -> torch.Tensor:
    """This rank's loss: summed cross-entropy over its share of the batch ``· world_size / n_labelled``
    (``n_labelled``: labelled tokens of the *global* batch). DDP averages the ranks' gradients, so the
    step is the gradient of the global batch's mean loss, whatever share of the labels each rank holds."""
    total = F.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX, reduction="sum"
    )
    return total * (world_size / max(1, n_labelled))


def train_one(
    model: SelectiveRopeForCausalLM,
    task: Task,
    s: TaskSettings,
    cfg: SelectiveRopeConfig,
    device: torch.device,
    *,
    run: RunDir | None = None,
    step_offset: int = 0,
    tag: dict[str, Any] | None = None,
    dist: DistContext | None = None,
) -> dict[str, Any]:
    """Train ``model`` on ``task`` for ``s.steps`` steps; returns the test metrics and the learning curve.

    The optimiser is ``s.training``'s (β2, weight decay, clip, warm-up, schedule). With ``select_best`` (state
    and copy: the official state-tracking protocol) every eval point also scores the task's *validation* set
    at the test length (``task.validate``), the best-validation weights are kept, training stops once the
    validation metric reaches ``stop_at`` (> 0), and the model is returned with the best weights, whose test
    metrics are reported (``best_step``, ``best_val_metric``, ``steps_run``). ``dist`` (default: the run
    directory's) splits each step's batch over the ranks of a torchrun launch.
    """
    dist = dist or (run.dist if run is not None else DistContext())
    model.to(device).train()  # pyright: ignore[reportArgumentType]  (transformers' decorated .to)
    net = dist.wrap(model)
    tr = s.training
    opt = make_optimizer(model, s.lr, tr["weight_decay"], tr["beta2"])
    every = s.eval_every or max(1, s.steps // 10)
    higher = HIGHER_IS_BETTER[s.task]
    best: dict[str, Any] = {}  # step, val_metric and weights of the best-validation checkpoint
    steps_run = 0
    curve: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    desc = f"{s.task}/{(tag or {}).get('position', '')}"
    bar = run.progress(s.steps, desc) if run is not None else None
    losses: list[float] = []
    try:
        if bar is not None:
            bar.__enter__()
        for step in range(s.steps):
            for group in opt.param_groups:
                group["lr"] = lr_at(step, s.steps, s.lr, tr["warmup_frac"], tr["schedule"])
            x, y = task.train_batch(step)
            if dist.distributed:
                n_labelled = int((y != IGNORE_INDEX).sum())
                x, y = dist.shard(x, what="batch_size"), dist.shard(y, what="batch_size")
                logits = net(input_ids=x.to(device), use_cache=False).logits
                loss = sharded_loss(logits, y.to(device), n_labelled, dist.world_size)
            else:
                logits = model(input_ids=x.to(device), use_cache=False).logits
                loss = next_token_loss(logits, y.to(device))
            if not torch.isfinite(loss):
                raise FloatingPointError(f"{desc}: loss became {loss.item()} at step {step}")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if tr["grad_clip"] > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), tr["grad_clip"])
            opt.step()
            losses.append(loss.item())
            steps_run = step + 1
            stop = False
            if (step + 1) % every == 0 or step + 1 == s.steps:
                model.eval()
                metric = task.evaluate(model, device, small=True)["metric"]
                point = {"step": step + 1, "loss": 0.0, "metric": metric}
                if tr["select_best"]:
                    val = task.validate(model, device)
                    point["val_metric"] = val
                    if not best or (val > best["val_metric"] if higher else val < best["val_metric"]):
                        weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
                        best = {"step": step + 1, "val_metric": val, "weights": weights}
                    target = tr["stop_at"]
                    stop = target > 0 and (val >= target if higher else val <= target)
                model.train()
                point["loss"] = dist.mean({"loss": sum(losses[-every:]) / len(losses[-every:])})["loss"]
                curve.append(point)
                if run is not None:
                    logged: dict[str, Any] = {**(tag or {}), "train_loss": point["loss"], "eval_metric": metric}
                    logged.update({k: point[k] for k in ("val_metric",) if k in point})
                    run.log(step_offset + step + 1, **logged)
            if bar is not None:
                bar.advance(loss=losses[-1])
            if stop:
                break
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    model.eval()
    if best:
        model.load_state_dict(best["weights"])
    final = task.evaluate(model, device)
    out = {
        "final": final,
        "metric": final["metric"],
        "curve": curve,
        "params": model.num_parameters(only_trainable=True),
        "train_seconds": time.perf_counter() - t0,
        "steps_run": steps_run,
    }
    if best:
        out.update(best_step=best["step"], best_val_metric=best["val_metric"])
    return out


def dry_run(cfg: SelectiveRopeConfig, device: torch.device) -> dict[str, Any]:
    """For every task of ``cfg``: its data (2 training sequences, 2 evaluation items per set), the Selective
    RoPE model and AdamW at the preset's real sizes, one training step at batch 2 and one evaluation.
    ``parameters`` / ``train_loss`` are the largest task's; ``tasks`` holds each task's."""
    per_task: dict[str, dict[str, Any]] = {}
    for task_name in cfg.tasks:
        s = dataclasses.replace(cfg.settings(task_name), batch_size=2, eval_size=2)
        task = make_task(s, 0)
        torch.manual_seed(0)
        model = build_model(s, "selective", task.vocab_size, cfg.rope_theta)
        model.to(device)  # pyright: ignore[reportArgumentType]  (transformers' decorated .to)
        opt = make_optimizer(model, s.lr, s.training["weight_decay"], s.training["beta2"])
        x, y = task.train_batch(0)
        loss = next_token_loss(model(input_ids=x.to(device), use_cache=False).logits, y.to(device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        model.eval()
        metric = task.evaluate(model, device)["metric"]
        per_task[task_name] = {
            "parameters": model.num_parameters(only_trainable=True),
            "train_loss": float(loss.item()),
            "metric": metric,
        }
    largest = max(per_task.values(), key=lambda r: r["parameters"])
    return {"parameters": int(largest["parameters"]), "train_loss": largest["train_loss"], "tasks": per_task}


def _candidates(cfg: SelectiveRopeConfig, task: str, position: str) -> list[tuple[float, dict[str, bool]]]:
    """The (learning rate, Selective RoPE switch overrides) runs one position of ``task`` trains."""
    variants = cfg.selective_variants(task) if position == "selective" else ({},)
    return [(lr, dict(v)) for lr in cfg.lrs(task) for v in variants]


def _candidate_key(task: str, position: str, lr: float, variant: dict[str, bool], single: bool) -> str:
    if single:
        return f"{task}/{position}"
    switches = ",".join(f"{k}={int(v)}" for k, v in variant.items())
    return f"{task}/{position}/lr={lr:g}" + (f"/{switches}" if switches else "")


def _better(result: Mapping[str, Any], held: Mapping[str, Any] | None, higher: bool) -> bool:
    """Whether ``result`` replaces the held candidate: the first one, then only a strictly better
    validation metric (``max``/``min`` keep the first of equal candidates, and so does this)."""
    if held is None:
        return True
    new, old = float(result["val_metric"]), float(held["val_metric"])
    return new > old if higher else new < old


def run(cfg: SelectiveRopeConfig, run_dir: RunDir) -> dict[str, Any]:
    """Train every (task, position) of ``cfg``; returns ``{"tasks": {task: {...}}, ...}`` for results.json.

    Where ``cfg`` sweeps the learning rate (``lr_sweep``) or Selective RoPE's bias and gate
    (``bias_gate_sweep``), every candidate trains from the same initial weights and the one with the best
    metric on the task's *validation* set is reported; its test metrics are the position's result and the
    whole sweep is kept under ``"sweep"``.
    """
    device = run_dir.device
    done: dict[str, Any] = {}
    # the chosen-so-far candidate's weights of a position whose model is not saved yet, and the positions whose
    # model is saved: a run killed between a candidate's checkpoint and the position's save_model still saves it
    best: dict[str, Any] = {}
    saved: list[str] = []
    ckpt = run_dir.load_checkpoint()
    if ckpt is not None:
        done = dict(ckpt[1].get("done", {}))
        best = dict(ckpt[1].get("best", {}))
        saved = list(ckpt[1].get("saved", []))
    offset = ckpt[0] if ckpt is not None else 0

    def checkpoint() -> None:
        run_dir.save_checkpoint(offset, {"done": done, "best": best, "saved": saved})

    tasks: dict[str, Any] = {}
    for task_name in cfg.tasks:
        s = cfg.settings(task_name)
        task = make_task(s, run_dir.seed)
        higher = HIGHER_IS_BETTER[task_name]
        runs: dict[str, Any] = {}
        for position in cfg.positions_of(task_name):
            candidates = _candidates(cfg, task_name, position)
            single = len(candidates) == 1
            name = f"{task_name}-{position}"
            results: list[dict[str, Any]] = []
            for lr, variant in candidates:
                key = _candidate_key(task_name, position, lr, variant, single)
                if key not in done:
                    cs = dataclasses.replace(s, lr=lr, selective={**s.selective, **variant})
                    torch.manual_seed(run_dir.seed)  # same initial weights stream for every position and lr
                    model = build_model(cs, position, task.vocab_size, cfg.rope_theta)
                    tag: dict[str, Any] = {"task": task_name, "position": position}
                    if not single:
                        tag.update(lr=lr, **{k: int(v) for k, v in variant.items()})
                    result = train_one(
                        model, task, cs, cfg, device, run=run_dir, step_offset=offset, tag=tag, dist=run_dir.dist
                    )
                    result.update(lr=lr, variant=variant)
                    if not single:
                        result["val_metric"] = task.validate(model, device)
                    offset += s.steps
                    done[key] = result
                    if name not in saved and _better(result, best.get(name), higher):
                        state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
                        best[name] = {"key": key, "val_metric": result.get("val_metric"), "state": state}
                    checkpoint()
                results.append(done[key])
            if single:
                runs[position] = results[0]
                chosen = 0
            else:
                pick = max if higher else min
                chosen = pick(range(len(results)), key=lambda i: results[i]["val_metric"])
                picked = results[chosen]
                sweep = [{k: r[k] for k in ("lr", "variant", "val_metric", "metric", "train_seconds")} for r in results]
                runs[position] = {**picked, "sweep": sweep}
            held = best.pop(name, None)
            if name not in saved and held is None:  # a checkpoint of an older version holds no weights
                print(f"[selective-rope] {name}: resumed past its training without weights; model not saved",
                      file=sys.stderr)  # fmt: skip
            elif name not in saved:
                lr, variant = candidates[chosen]
                if held["key"] != _candidate_key(task_name, position, lr, variant, single):
                    raise RuntimeError(f"selective-rope: held weights of {held['key']} are not the chosen candidate")
                cs = dataclasses.replace(s, lr=lr, selective={**s.selective, **variant})
                with global_rng():  # rebuilding the architecture draws init weights: leave the streams as they are
                    model = build_model(cs, position, task.vocab_size, cfg.rope_theta)
                model.load_state_dict(held["state"])
                run_dir.save_model(
                    name,
                    model,
                    extra={
                        "task": task_name,
                        "position": position,
                        "input": "token ids [B, T]",
                        "vocab_size": task.vocab_size,
                    },
                )
                saved.append(name)
                checkpoint()
        tasks[task_name] = {
            "settings": s.to_dict(),
            "higher_is_better": higher,
            "runs": runs,
        }
        _plot(run_dir, task_name, runs, s)
    return {"tasks": tasks, "positions": list(cfg.positions), "device": str(device)}


def _plot(run_dir: RunDir, task_name: str, runs: dict[str, Any], s: TaskSettings) -> None:
    from iclr26_shared.plotting import plot_curves

    label = {
        "state": "test token accuracy",
        "copy": "token accuracy beyond train lengths",
        "mqar": "query accuracy",
        "lm": "val bits per byte",
    }[task_name]
    curves = {p: ([c["step"] for c in r["curve"]], [c["metric"] for c in r["curve"]]) for p, r in runs.items()}
    plot_curves(
        run_dir.figure_path(f"{task_name}_curve"),
        curves,
        xlabel="step",
        ylabel=label,
        title=f"{task_name} ({s.layer}, {s.num_layers} layer(s), D={s.hidden_size})",
    )
    if task_name == "copy":
        by_len = {p: r["final"]["string_acc_by_length"] for p, r in runs.items()}
        _plot_copy_length(run_dir, by_len, s)


def _plot_copy_length(run_dir: RunDir, by_len: dict[str, dict[str, float]], s: TaskSettings) -> None:
    """String accuracy per evaluation length, on an accuracy axis fixed to [0, 1] (an all-zero series sits
    on the floor instead of in the middle of an axis running to -0.04); a marker and dash per position so
    coinciding series stay visible; the training range is shaded."""
    import matplotlib.pyplot as plt

    from iclr26_shared.plotting import save_figure

    fig, ax = plt.subplots(figsize=(6, 4))
    styles = {"nope": ("o", "-"), "rope": ("s", "--"), "selective": ("^", ":")}
    for pos, d in by_len.items():
        marker, dash = styles.get(pos, ("x", "-."))
        ax.plot([int(n) for n in d], list(d.values()), marker=marker, linestyle=dash, label=pos, clip_on=False)
    ax.axvspan(s.copy_min_len, s.copy_max_len, color="grey", alpha=0.15, label="training lengths")
    ax.set_ylim(0.0, 1.0)
    ax.set(
        xlabel="string length",
        ylabel="exact string accuracy",
        title=f"copying, trained on lengths {s.copy_min_len}-{s.copy_max_len}",
    )
    ax.grid(True, alpha=0.3)
    ax.legend()
    save_figure(fig, run_dir.figure_path("copy_length"))
