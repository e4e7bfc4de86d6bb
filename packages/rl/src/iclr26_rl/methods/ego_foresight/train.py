"""Training and evaluation of DrQ-v2 and DrQ-v2+EF (``iclr26-rl ego-foresight``).

One run trains every ``(agent, seed)`` of the config in turn (``cfg.jobs``), on the same task with the
same evaluation episodes, then aggregates learning curves, the ENS and the EF prediction error.

Global step: job ``j`` at agent step ``t`` logs and checkpoints at ``j · cfg.steps + t``, so metrics and
checkpoints stay monotone across jobs. Checkpoints are written at episode ends (nothing of the running
episode has to be saved): networks, optimizers, replay buffer, counters, evaluation history and the
RNG states. Every training episode ``e`` of a job resets with the seed ``(job seed, e)`` and every
evaluation episode with a fixed seed, so a resumed run continues bit-for-bit on the CPU.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import torch

from iclr26_rl.agents.drqv2 import DrQV2Agent, DrQV2Hparams, DrQV2Policy
from iclr26_rl.data.replay import EpisodeReplay
from iclr26_rl.envs.pixels import FrameStack, MujocoPixels, make_pixel_env
from iclr26_rl.methods.ego_foresight.config import AGENTS, EgoForesightConfig
from iclr26_rl.methods.ego_foresight.metrics import ens_details, mean_ci
from iclr26_rl.methods.ego_foresight.model import EgoForesightHead
from iclr26_shared.plotting import plot_curves, plot_images
from iclr26_shared.runs import RunDir
from iclr26_shared.seeding import get_rng_state, set_rng_state

__all__ = ["build_agent", "dry_run", "evaluate_policy", "make_env", "prediction_error", "run", "train_job"]

#: Reset seeds of evaluation episodes (shared by all agents and seeds: paired comparisons).
EVAL_SEED = 1_000_000
#: Reset seeds of the held-out babbling episodes of the prediction test.
PRED_SEED = 2_000_000


class _Crash(RuntimeError):
    """Raised by the ``crash_at_step`` test hook."""


def make_env(cfg: EgoForesightConfig) -> FrameStack:
    """The pixel env of the config."""
    return make_pixel_env(
        cfg.env,
        image_size=cfg.image_size,
        frame_stack=cfg.frame_stack,
        action_repeat=cfg.action_repeat,
        camera=cfg.camera,
        fast_render=cfg.fast_render,
        max_episode_steps=cfg.max_episode_steps or None,
    )


def build_agent(
    cfg: EgoForesightConfig, agent: str, obs_shape: tuple[int, int, int], action_dim: int, device: torch.device
) -> DrQV2Agent:
    """DrQ-v2 (``agent="drqv2"``) or DrQ-v2 with the EF head (``"drqv2-ef"``) from the config."""
    if agent not in AGENTS:
        raise ValueError(f"unknown agent {agent!r} (expected one of {AGENTS})")
    ef = agent == "drqv2-ef"
    hp = DrQV2Hparams(
        lr=cfg.lr,
        encoder="pool" if ef else cfg.baseline_encoder,
        feature_dim=cfg.feature_dim,
        hidden_dim=cfg.hidden_dim,
        repr_dim=cfg.repr_dim,
        conv_channels=cfg.conv_channels,
        critic_tau=cfg.critic_tau,
        std_init=cfg.std_init,
        std_final=cfg.std_final,
        std_steps=cfg.std_steps,
        std_clip=cfg.std_clip,
        expl_steps=cfg.expl_steps,
        babbling_steps=cfg.babbling_steps if (ef or cfg.babble_baseline) else 0,
        babbling_scale=cfg.babbling_scale,
        aug_pad=cfg.aug_pad,
        aux_weight=cfg.beta,
    )
    head = (
        EgoForesightHead(
            cfg.repr_dim,
            cfg.agent_dim,
            action_dim,
            cfg.frame_stack,
            cfg.horizon,
            cfg.image_size,
            cfg.rollout_hidden,
            cfg.decoder_channels,
            cfg.aug_pad,
        )
        if ef
        else None
    )
    return DrQV2Agent(obs_shape, action_dim, hp, device, aux=head)


def _pixels(env: FrameStack) -> MujocoPixels:
    inner = env.env
    assert isinstance(inner, MujocoPixels)
    return inner


def evaluate_policy(
    agent: DrQV2Agent, env: FrameStack, episodes: int, step: int, record: bool = False
) -> tuple[float, list[float], np.ndarray | None]:
    """Mean return of the deterministic policy over ``episodes`` fixed-seed episodes.

    Returns ``(mean, per-episode returns, frames uint8 [T+1, S, S, 3] of episode 0 when record)``.
    """
    returns, frames = [], []
    for e in range(episodes):
        obs, _ = env.reset(seed=EVAL_SEED + e)
        if record and e == 0:
            frames.append(env.last_frame)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(agent.act(obs, step, eval_mode=True))
            total += reward
            done = terminated or truncated
            if record and e == 0:
                frames.append(env.last_frame)
        returns.append(total)
    strip = np.stack(frames).transpose(0, 2, 3, 1) if record else None
    return float(np.mean(returns)), returns, strip


@torch.no_grad()
def prediction_error(
    agent: DrQV2Agent, env: FrameStack, cfg: EgoForesightConfig, episodes: int, mean_frame: np.ndarray
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """EF prediction error vs no-skill predictors on held-out motor-babbling episodes.

    For every window start s of each episode the encoder reads frames ``s..s+t_c−1``, the head rolls
    the agent part forward with the episode's actions and decodes frames ``s+t_c..s+t_c+H−1`` (paper §3,
    Eq. 1-3). Errors (squared error per pixel and channel, values in [0, 1]) are averaged over

    * ``agent``: the pixels where the agent is in the *target* frame (MuJoCo segmentation), so a
      prediction that erases the agent cannot beat copying the last frame, and
    * ``full``: the whole frame,

    for five predictors: ``ef`` (the head, true actions), ``rand`` (the head, random babbling actions
    instead of the episode's: only a head that follows the actions does better with the true ones),
    ``copy`` (the last context frame), ``mean`` (``mean_frame``, the mean training frame: the mean
    predictor) and ``colour`` (every pixel in the agent's mean colour over the held-out agent pixels: the
    best constant guess on the agent region, which a grey blur from an untrained decoder can already beat
    the mean frame and copy-last by). Two diagnostics say *why* ``ef`` and ``rand`` may tie:

    * ``action_sensitivity``: mean |x̂(true actions) − x̂(random actions)| on the agent region, and
    * ``agent_part_sensitivity``: mean |x̂ − x̂ with the agent part h_a taken from another window| on
      the agent region (0 when the decoder ignores the agent part, whatever the rollout does).

    Returns ``(summary, example)`` where ``example`` holds one window's real/predicted/copied frames.
    """
    head = agent.aux
    assert isinstance(head, EgoForesightHead)
    pix = _pixels(env)
    f, h_len = cfg.frame_stack, cfg.horizon
    agent.train(False)
    keys = [f"{p}_{r}" for p in ("ef", "copy", "rand", "mean", "colour") for r in ("agent", "full")]
    sums = {k: np.zeros(h_len) for k in (*keys, "action_sens", "agent_part_sens")}
    counts = np.zeros(h_len)
    example: dict[str, np.ndarray] = {}
    recorded = []
    for e in range(episodes):
        rng = np.random.Generator(np.random.PCG64(PRED_SEED + e))
        env.reset(seed=PRED_SEED + e)
        frames, masks, actions = [env.last_frame], [pix.agent_mask()], [np.zeros(agent.action_dim, np.float32)]
        done = False
        while not done:
            a = np.clip(rng.uniform(-cfg.babbling_scale, cfg.babbling_scale, agent.action_dim), -1, 1)
            _, _, terminated, truncated, _ = env.step(a.astype(np.float32))
            frames.append(env.last_frame)
            masks.append(pix.agent_mask())
            actions.append(a.astype(np.float32))
            done = terminated or truncated
        recorded.append((np.stack(frames), np.stack(masks), np.stack(actions)))
    # The agent's mean colour over every held-out agent pixel: a frame painted in it is the best constant
    # guess on the agent region (an oracle no-skill predictor: it knows the colour, not the position).
    agent_pixels = np.concatenate([fr.transpose(0, 2, 3, 1)[mk] for fr, mk, _ in recorded]) / 255.0
    colour = (agent_pixels.mean(axis=0) if len(agent_pixels) else np.full(3, 0.5)).astype(np.float32)
    for e, (fr, mk, ac) in enumerate(recorded):  # [T+1, 3, S, S], [T+1, S, S], [T+1, A]
        starts = range(0, len(fr) - (f + h_len) + 1)
        if not starts:
            continue
        ctx = np.stack([fr[s : s + f].reshape(-1, *fr.shape[2:]) for s in starts])  # [W, 3F, S, S]
        fut_a = np.stack([ac[s + f : s + f + h_len] for s in starts])  # [W, H, A]
        target = np.stack([fr[s + f : s + f + h_len] for s in starts]).astype(np.float32) / 255.0  # [W, H, 3, S, S]
        tmask = np.stack([mk[s + f : s + f + h_len] for s in starts])  # [W, H, S, S]
        last = np.stack([fr[s + f - 1] for s in starts]).astype(np.float32) / 255.0  # [W, 3, S, S]
        hvec = agent.encoder(torch.as_tensor(ctx, device=agent.device).float())
        fut_t = torch.as_tensor(fut_a, device=agent.device)
        pred = head.predict(hvec, fut_t).cpu().numpy()  # [W, H, 3, S, S]
        cf_rng = np.random.Generator(np.random.PCG64(PRED_SEED + 500_000 + e))
        rand_a = np.clip(cf_rng.uniform(-cfg.babbling_scale, cfg.babbling_scale, fut_a.shape), -1, 1)
        pred_rand = head.predict(hvec, torch.as_tensor(rand_a, device=agent.device).float()).cpu().numpy()
        swapped = torch.cat([hvec[:, : head.agent_dim].roll(len(starts) // 2, 0), hvec[:, head.agent_dim :]], 1)
        pred_swap = head.predict(swapped, fut_t).cpu().numpy()
        errors = {
            "ef": ((pred - target) ** 2).mean(axis=2),  # [W, H, S, S]
            "copy": ((last[:, None] - target) ** 2).mean(axis=2),
            "rand": ((pred_rand - target) ** 2).mean(axis=2),
            "mean": ((mean_frame[None, None] - target) ** 2).mean(axis=2),
            "colour": ((colour[None, None, :, None, None] - target) ** 2).mean(axis=2),
        }
        diffs = {
            "action_sens": np.abs(pred - pred_rand).mean(axis=2),
            "agent_part_sens": np.abs(pred - pred_swap).mean(axis=2),
        }
        for k in range(h_len):
            m = tmask[:, k]
            npix = max(int(m.sum()), 1)
            for name, err in errors.items():
                sums[f"{name}_agent"][k] += float((err[:, k] * m).sum()) / npix * len(starts)
                sums[f"{name}_full"][k] += float(err[:, k].mean()) * len(starts)
            for name, diff in diffs.items():
                sums[name][k] += float((diff[:, k] * m).sum()) / npix * len(starts)
            counts[k] += len(starts)
        if not example:
            w = len(starts) // 2
            example = {
                "real": (target[w] * 255).astype(np.uint8),
                "pred": (pred[w] * 255).astype(np.uint8),
                "last": (last[w] * 255).astype(np.uint8),
                "mask": tmask[w],
            }
    agent.train(True)
    per_h = {k: (v / np.maximum(counts, 1)).tolist() for k, v in sums.items()}
    summary: dict[str, Any] = {f"{k}_mse": float(np.mean(per_h[k])) for k in keys}
    summary["action_sensitivity"] = float(np.mean(per_h["action_sens"]))
    summary["agent_part_sensitivity"] = float(np.mean(per_h["agent_part_sens"]))
    summary["per_horizon"] = per_h
    summary["windows"] = int(counts[0])
    return summary, example


@dataclass
class _JobState:
    step: int = 0
    episode: int = 0
    updates: int = 0
    eval_steps: list[int] = field(default_factory=list)
    eval_returns: list[float] = field(default_factory=list)
    env_time: float = 0.0
    update_time: float = 0.0


def train_job(
    cfg: EgoForesightConfig,
    run: RunDir,
    job: int,
    agent_name: str,
    seed: int,
    finished: list[dict[str, Any]],
    resume: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train one ``(agent, seed)``; checkpoints carry ``finished`` (the results of earlier jobs)."""
    job_seed = seed + 1000 * run.seed
    env, eval_env = make_env(cfg), make_env(cfg)
    obs_shape = cast(tuple[int, int, int], env.observation_space.shape)
    action_dim = int(cast(tuple[int, ...], env.action_space.shape)[0])
    if resume is None:
        torch.manual_seed(job_seed)
    agent = build_agent(cfg, agent_name, obs_shape, action_dim, run.device)
    replay = EpisodeReplay(cfg.replay_size, cfg.frame_stack, cfg.nstep, cfg.discount, seed=job_seed)
    st = _JobState()
    if resume is not None:
        agent.load_state_dict(resume["agent"])
        if "replay" in resume:
            replay.load_state_dict(resume["replay"])
        for key in ("step", "episode", "updates"):
            setattr(st, key, int(resume[key]))
        st.eval_steps = [int(x) for x in resume["eval_steps"]]
        st.eval_returns = [float(x) for x in resume["eval_returns"]]
        st.env_time, st.update_time = float(resume["env_time"]), float(resume["update_time"])
        set_rng_state(resume["rng"])
    base = job * cfg.steps
    window = agent.window

    def evaluate() -> None:
        mean, _, _ = evaluate_policy(agent, eval_env, cfg.eval_episodes, st.step)
        st.eval_steps.append(st.step)
        st.eval_returns.append(mean)
        run.log(base + st.step, kind="eval", agent=agent_name, seed=seed, env_step=st.step, eval_return=mean)

    def checkpoint() -> None:
        state = {
            "step": st.step,
            "episode": st.episode,
            "updates": st.updates,
            "eval_steps": list(st.eval_steps),
            "eval_returns": list(st.eval_returns),
            "env_time": st.env_time,
            "update_time": st.update_time,
            "agent": agent.state_dict(),
            "rng": get_rng_state(),
        }
        if cfg.save_replay:
            state["replay"] = replay.state_dict()
        run.save_checkpoint(base + st.step, {"job": job, "finished": finished, "train": state})

    if resume is None:
        evaluate()
    last_ckpt = st.step
    metrics: dict[str, float] = {}
    with run.progress(cfg.steps, f"{agent_name} seed {seed}", completed=st.step) as bar:
        while st.step < cfg.steps:
            t0 = time.perf_counter()
            obs, _ = env.reset(seed=job_seed * 100_003 + st.episode)
            replay.start_episode(env.last_frame, action_dim)
            st.env_time += time.perf_counter() - t0
            episode_return, done = 0.0, False
            while not done and st.step < cfg.steps:
                action = agent.act(obs, st.step, eval_mode=False)
                if st.step >= cfg.seed_steps and st.step % cfg.update_every == 0 and replay.can_sample(window):
                    t0 = time.perf_counter()
                    metrics = agent.update(replay.sample(cfg.batch_size, window), st.step)
                    st.update_time += time.perf_counter() - t0
                    st.updates += 1
                t0 = time.perf_counter()
                obs, reward, terminated, truncated, _ = env.step(action)
                st.env_time += time.perf_counter() - t0
                done = terminated or truncated
                replay.add(action, reward, env.last_frame, terminated, truncated)
                episode_return += reward
                st.step += 1
                bar.advance(
                    1, ret=episode_return, **{k: v for k, v in metrics.items() if k in ("critic_loss", "ef_loss")}
                )
                if st.step % cfg.eval_every == 0 or st.step == cfg.steps:
                    evaluate()
                if base + st.step == cfg.crash_at_step:
                    raise _Crash(f"crash_at_step hook at global step {base + st.step}")
            st.episode += 1
            run.log(
                base + st.step,
                kind="train",
                agent=agent_name,
                seed=seed,
                env_step=st.step,
                episode_return=episode_return,
                **metrics,
            )
            if st.step - last_ckpt >= cfg.checkpoint_every and st.step < cfg.steps:
                checkpoint()
                last_ckpt = st.step

    result: dict[str, Any] = {
        "agent": agent_name,
        "seed": seed,
        "eval_steps": list(st.eval_steps),
        "eval_returns": list(st.eval_returns),
        "updates": st.updates,
        "env_steps_per_s": st.step / max(st.env_time, 1e-9),
        "updates_per_s": st.updates / max(st.update_time, 1e-9),
    }
    _, _, strip = evaluate_policy(agent, eval_env, 1, st.step, record=True)
    if strip is not None and job % len(cfg.train_seeds) == 0:
        idx = np.linspace(0, len(strip) - 1, min(8, len(strip))).round().astype(int)
        plot_images(
            run.figure_path(f"eval_episode_{agent_name}"),
            strip[idx],
            titles=[f"t={i}" for i in idx],
            title=f"{agent_name}: evaluation episode after {st.step} steps",
        )
    if agent_name == "drqv2-ef" and cfg.pred_eval_episodes > 0:
        summary, example = prediction_error(agent, eval_env, cfg, cfg.pred_eval_episodes, replay.mean_frame())
        result["prediction"] = summary
        if example and job % len(cfg.train_seeds) == 0:
            h = len(example["real"])
            grid = np.concatenate(
                [
                    example["real"].transpose(0, 2, 3, 1),
                    example["pred"].transpose(0, 2, 3, 1),
                    np.repeat(example["last"][None], h, 0).transpose(0, 2, 3, 1),
                ]
            )
            titles = [f"real t+{i + 1}" for i in range(h)] + [f"EF t+{i + 1}" for i in range(h)] + ["copy last"] * h
            plot_images(
                run.figure_path("ef_prediction"),
                grid,
                titles=titles,
                ncols=h,
                title="rows: real future frames / EF reconstruction / copy-last baseline",
            )
    extra = {
        "env": cfg.env,
        "seed": seed,
        "steps": st.step,
        "input": f"uint8 [3F, S, S] = {list(obs_shape)} stacked frames",
    }
    run.save_model(f"{agent_name}-seed{seed}", DrQV2Policy.from_agent(agent), extra=extra)
    env.close()
    eval_env.close()
    return result


def _aggregate(cfg: EgoForesightConfig, jobs: list[dict[str, Any]]) -> dict[str, Any]:
    agents: dict[str, Any] = {}
    for name in cfg.agents:
        rows = [j for j in jobs if j["agent"] == name]
        steps = rows[0]["eval_steps"]
        returns = np.asarray([r["eval_returns"] for r in rows])  # [seeds, evals]
        mean, low, high = mean_ci(returns, axis=0)
        final = returns[:, -1]
        agents[name] = {
            "eval_steps": steps,
            "eval_frames": [s * cfg.action_repeat for s in steps],
            "mean_return": mean.tolist(),
            "ci_low": low.tolist(),
            "ci_high": high.tolist(),
            "final_return": float(final.mean()),
            "final_return_per_seed": final.tolist(),
            "final_return_sem": float(final.std(ddof=1) / np.sqrt(len(final))) if len(final) > 1 else 0.0,
            "mean_return_over_curve": float(returns.mean()),
            "env_steps_per_s": float(np.mean([r["env_steps_per_s"] for r in rows])),
            "updates_per_s": float(np.mean([r["updates_per_s"] for r in rows])),
        }
    ens = ens_details({n: a["mean_return"] for n, a in agents.items()})
    for name, score in ens["ens"].items():
        agents[name]["ens"] = score if np.isfinite(score) else None  # JSON null: no curve learned
    ens = {**ens, "ens": {n: agents[n]["ens"] for n in agents}}
    ens["chance"] = ens["chance"] if np.isfinite(ens["chance"]) else None
    # ENS compares algorithms where learning converges; it says nothing if no curve learns.
    out: dict[str, Any] = {"agents": agents, "ens_defined": ens["defined"], "ens": ens}
    preds = [j["prediction"] for j in jobs if "prediction" in j]
    if preds:
        keys = [k for k, v in preds[0].items() if isinstance(v, float)]
        prediction: dict[str, Any] = {k: float(np.mean([p[k] for p in preds])) for k in keys}
        out["prediction"] = prediction
        prediction["per_horizon"] = {
            k: np.mean([p["per_horizon"][k] for p in preds], axis=0).tolist() for k in preds[0]["per_horizon"]
        }
        prediction["windows_per_seed"] = preds[0]["windows"]
    return out


def curve_bands(cfg: EgoForesightConfig, summary: dict[str, Any]) -> dict[str, Any]:
    """Bands and title of the learning-curve figure: the 95% Student-t CI band is drawn (and named in the
    title) only with two or more seeds; one seed draws the bare curve and its title says so."""
    n = len(cfg.train_seeds)
    labels: dict[str, Any] = {"xlabel": "environment frames", "ylabel": "evaluation return"}
    if n < 2:
        return {**labels, "bands": None, "title": f"{cfg.env}: 1 seed (no band: spread needs 2+ seeds)"}
    bands = {name: (a["ci_low"], a["ci_high"]) for name, a in summary["agents"].items()}
    return {**labels, "bands": bands, "title": f"{cfg.env}: mean and 95% t-CI band over {n} seeds"}


def run(cfg: EgoForesightConfig, run_dir: RunDir) -> dict[str, Any]:
    """Train every job of ``cfg`` (resuming from the last checkpoint), then aggregate and plot."""
    finished: list[dict[str, Any]] = []
    resume_job, resume_state = 0, None
    ckpt = run_dir.load_checkpoint()
    if ckpt is not None:
        _, state = ckpt
        finished = list(state["finished"])
        resume_job, resume_state = int(state["job"]), state.get("train")
    for job, (agent_name, seed) in enumerate(cfg.jobs):
        if job < len(finished):
            continue
        resume = resume_state if job == resume_job else None
        result = train_job(cfg, run_dir, job, agent_name, seed, finished, resume)
        finished.append(result)
        run_dir.save_checkpoint((job + 1) * cfg.steps, {"job": job + 1, "finished": finished, "train": None})
    summary = _aggregate(cfg, finished)
    curves = {n: (a["eval_frames"], a["mean_return"]) for n, a in summary["agents"].items()}
    plot_curves(run_dir.figure_path("learning_curves"), curves, **curve_bands(cfg, summary))
    if "prediction" in summary:
        ph = summary["prediction"]["per_horizon"]
        ks = list(range(1, cfg.horizon + 1))
        plot_curves(
            run_dir.figure_path("prediction_error"),
            {
                "EF, true actions": (ks, ph["ef_agent"]),
                "EF, random actions": (ks, ph["rand_agent"]),
                "copy last frame": (ks, ph["copy_agent"]),
                "mean training frame": (ks, ph["mean_agent"]),
            },
            xlabel="steps ahead",
            ylabel="MSE per pixel, agent region",
            title="future-frame error on held-out babbling episodes",
        )
    return {
        "env": cfg.env,
        "frames_per_step": cfg.action_repeat,
        "steps": cfg.steps,
        "train_seeds": list(cfg.train_seeds),
        **summary,
        "jobs": finished,
    }


def dry_run(cfg: EgoForesightConfig, device: torch.device) -> dict[str, Any]:
    """``--dry-run``: the preset's env, every agent at its real sizes (networks, EF head, optimizers), one
    episode of random actions in a replay, one gradient step each at batch 2 (critic + β·EF loss for the
    EF agent) and one evaluation action. ``parameters``: the trainable parameters of all the agents."""
    env = make_env(cfg)
    try:
        obs_shape = cast(tuple[int, int, int], env.observation_space.shape)
        action_dim = int(cast(tuple[int, ...], env.action_space.shape)[0])
        agents = {name: build_agent(cfg, name, obs_shape, action_dim, device) for name in cfg.agents}
        window = max(a.window for a in agents.values())
        replay = EpisodeReplay(max(cfg.episode_steps + 1, 64), cfg.frame_stack, cfg.nstep, cfg.discount, seed=0)
        obs, _ = env.reset(seed=0)
        replay.start_episode(env.last_frame, action_dim)
        rng = np.random.default_rng(0)
        done = False
        while not done:
            action = rng.uniform(-1, 1, action_dim).astype(np.float32)
            obs, reward, terminated, truncated, _ = env.step(action)
            replay.add(action, reward, env.last_frame, terminated, truncated)
            done = terminated or truncated
        out: dict[str, Any] = {"parameters": 0, "train_loss": 0.0}
        for name, agent in agents.items():
            nets = [agent.encoder, agent.actor, agent.critic, *(() if agent.aux is None else (agent.aux,))]
            n_params = sum(p.numel() for m in nets for p in m.parameters() if p.requires_grad)
            metrics = agent.update(replay.sample(2, window if agent.window else 0), cfg.seed_steps)
            loss = metrics["critic_loss"] + cfg.beta * metrics.get("ef_loss", 0.0)
            action = agent.act(obs, cfg.seed_steps, eval_mode=True)
            out[f"{name}/parameters"], out[f"{name}/train_loss"] = n_params, loss
            out[f"{name}/eval_action_abs_max"] = float(np.abs(action).max())
            out["parameters"] += n_params
            out["train_loss"] += loss
        return out
    finally:
        env.close()
