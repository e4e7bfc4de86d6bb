"""Throughput on this machine: environment steps/s (simulate + render) and agent updates/s, ± EF head.

``uv run python packages/rl/benchmarks/throughput.py [--quick] [--out runs/bench/rl-throughput.json]``

* env: agent steps per second of :func:`make_pixel_env` (action repeat 2, frame stack 3) on Reacher-v5
  and Pusher-v5 with fast rendering and with MuJoCo's default render flags, at 64x64 (and 84x84);
* agent: gradient updates per second of DrQ-v2 and DrQ-v2+EF at the ``quick`` preset's network sizes
  and (without ``--quick``) at the paper's (batch 256, 84x84, n = 2048, hidden 1024).
The ``ef_cost`` entries are the ratio DrQ-v2 time / DrQ-v2+EF time (below 1: EF is slower).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from iclr26_rl.data.replay import EpisodeReplay  # noqa: E402
from iclr26_rl.envs.pixels import make_pixel_env  # noqa: E402
from iclr26_rl.methods.ego_foresight.config import PRESETS, EgoForesightConfig  # noqa: E402
from iclr26_rl.methods.ego_foresight.train import build_agent  # noqa: E402
from iclr26_shared.bench import bench_main, compare, measure  # noqa: E402


def _env_rate(env_id: str, size: int, fast: bool, steps: int) -> dict[str, Any]:
    env = make_pixel_env(env_id, image_size=size, fast_render=fast)
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def run() -> None:
        for _ in range(steps):
            _, _, term, trunc, _ = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
            if term or trunc:
                env.reset()

    timing = measure(run, repeats=3)
    env.close()
    return {"agent_steps_per_s": steps / timing["median_s"], **timing}


def _agents(cfg: EgoForesightConfig, repeats: int) -> dict[str, Any]:
    s, f = cfg.image_size, cfg.frame_stack
    rng = np.random.default_rng(0)
    buf = EpisodeReplay(10_000, f, cfg.nstep, cfg.discount)
    for _ in range(4):
        buf.add_episode(
            rng.integers(0, 255, (26, 3, s, s), dtype=np.uint8),
            rng.uniform(-1, 1, (25, 2)).astype(np.float32),
            rng.normal(size=25),
            terminated=False,
        )
    dev = torch.device("cpu")
    base = build_agent(cfg, "drqv2", (3 * f, s, s), 2, dev)
    ef = build_agent(cfg, "drqv2-ef", (3 * f, s, s), 2, dev)
    res = compare(
        lambda: ef.update(buf.sample(cfg.batch_size, ef.window), 10_000),
        lambda: base.update(buf.sample(cfg.batch_size), 10_000),
        repeats=repeats,
    )
    return {
        "drqv2_updates_per_s": 1 / res["baseline"]["median_s"],
        "drqv2_ef_updates_per_s": 1 / res["fast"]["median_s"],
        "ef_cost": res["speedup"],
        "batch_size": cfg.batch_size,
        "image_size": s,
        "repr_dim": cfg.repr_dim,
    }


def run(quick: bool) -> dict[str, Any]:
    torch.manual_seed(0)
    out: dict[str, Any] = {"torch_threads": torch.get_num_threads()}
    steps = 50 if quick else 200
    for env_id in ("Reacher-v5", "Pusher-v5"):
        for size in (64,) if quick else (64, 84):
            for fast in (True, False):
                key = f"env_{env_id.split('-')[0].lower()}_{size}px_{'fast' if fast else 'default'}_render"
                out[key] = _env_rate(env_id, size, fast, steps)
    out["agent_quick_preset"] = _agents(PRESETS["quick"], 3)
    if not quick:
        paper = dataclasses.replace(PRESETS["full"], seed_steps=0)
        out["agent_paper_sizes"] = _agents(paper, 2)
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("rl-throughput", run))
