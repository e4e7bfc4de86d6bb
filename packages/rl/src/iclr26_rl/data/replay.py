"""Episodic replay buffer with n-step returns and context+horizon windows (DrQ-v2 / Ego-Foresight).

Storage follows the dm_env convention of DrQ-v2: an episode of ``T`` agent steps is kept as

* ``frames``    ``uint8 [T+1, 3, S, S]``: single frames, ``frames[0]`` from ``reset``;
* ``actions``   ``float32 [T+1, A]``: ``actions[t]`` is the action that led to ``frames[t]`` (``actions[0] = 0``);
* ``rewards``   ``float32 [T+1]``: ``rewards[t]`` was received with ``frames[t]`` (``rewards[0] = 0``);
* ``discounts`` ``float32 [T+1]``: 1, except 0 at ``t = T`` when the episode *terminated* (a truncation
  by the time limit keeps 1, so targets bootstrap through it).

Frames are stacked at sampling time: the observation at time ``t`` is
``concat(frames[max(t-F+1, 0)], ..., frames[t])`` (copies of the first frame before the start, as the
:class:`~iclr26_rl.envs.FrameStack` wrapper does), which stores each frame once instead of F times.

**Transition** (DrQ-v2): episode uniform, then ``idx ~ U{1, ..., T-n+1}``::

    obs      = stack(idx - 1)          action = actions[idx]
    reward   = sum_{i<n} (prod_{j<i} gamma d[idx+j]) r[idx+i]
    discount = prod_{i<n} gamma d[idx+i]
    next_obs = stack(idx + n - 1)

**Window** (Ego-Foresight, ``window = F + H``): sampled *in addition to* the transitions, from an
independent episode and start ``s ~ U{0, ..., T - (F+H-1)}``: the context is ``frames[s : s+F]`` (the
observation ``stack(s+F-1)`` without padding), the future frames are ``frames[s+F : s+F+H]`` and
``window_actions[:, i] = actions[s+i]`` (the action leading to window frame ``i``). The critic's
transitions are drawn from every step of every episode, as DrQ-v2's, so an agent with windows trains
its critic on the same transitions as one without (on 25-step Reacher episodes a window-anchored
transition could never reach the last F+H-1-n steps).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["Batch", "EpisodeReplay"]


@dataclass
class Batch:
    """A sampled batch (numpy; the agent moves it to its device).

    Attributes:
        obs: ``uint8 [B, 3F, S, S]``.
        action: ``float32 [B, A]``.
        reward: ``float32 [B, 1]`` n-step discounted return.
        discount: ``float32 [B, 1]`` gamma^n times the product of episode discounts.
        next_obs: ``uint8 [B, 3F, S, S]``.
        window_frames: ``uint8 [B, F+H, 3, S, S]`` or None (window sampling only; independent of the
            transitions above).
        window_actions: ``float32 [B, F+H, A]`` or None; entry i led to window frame i.
    """

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    discount: np.ndarray
    next_obs: np.ndarray
    window_frames: np.ndarray | None = None
    window_actions: np.ndarray | None = None


class EpisodeReplay:
    """FIFO buffer of whole episodes (oldest dropped beyond ``capacity`` transitions).

    Args:
        capacity: Maximum number of stored transitions (agent steps).
        frame_stack: F, frames per observation.
        nstep: n of the n-step return.
        discount: gamma.
        seed: Seed of the sampling RNG (its state travels in :meth:`state_dict`).
    """

    def __init__(self, capacity: int, frame_stack: int, nstep: int, discount: float, seed: int = 0) -> None:
        if capacity < 1 or frame_stack < 1 or nstep < 1:
            raise ValueError("capacity, frame_stack and nstep must be >= 1")
        self.capacity = int(capacity)
        self.frame_stack = int(frame_stack)
        self.nstep = int(nstep)
        self.discount = float(discount)
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.episodes: list[dict[str, np.ndarray]] = []
        self._pending: dict[str, list[Any]] | None = None

    # ------------------------------------------------------------------------------------------------
    # adding
    # ------------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """Stored transitions (completed episodes only)."""
        return sum(len(ep["rewards"]) - 1 for ep in self.episodes)

    @property
    def num_episodes(self) -> int:
        """Completed episodes held."""
        return len(self.episodes)

    def start_episode(self, frame: np.ndarray, action_dim: int) -> None:
        """Begin an episode with its first frame ``uint8 [3, S, S]`` (any unfinished one is dropped)."""
        self._pending = {
            "frames": [np.asarray(frame, dtype=np.uint8)],
            "actions": [np.zeros(action_dim, dtype=np.float32)],
            "rewards": [0.0],
        }

    def add(self, action: np.ndarray, reward: float, frame: np.ndarray, terminated: bool, truncated: bool) -> None:
        """Append one step; the episode is stored when ``terminated`` or ``truncated``."""
        if self._pending is None:
            raise RuntimeError("call start_episode() before add()")
        self._pending["frames"].append(np.asarray(frame, dtype=np.uint8))
        self._pending["actions"].append(np.asarray(action, dtype=np.float32))
        self._pending["rewards"].append(float(reward))
        if terminated or truncated:
            p = self._pending
            self._pending = None
            self.add_episode(
                np.stack(p["frames"]), np.stack(p["actions"][1:]), np.asarray(p["rewards"][1:]), terminated
            )

    def add_episode(self, frames: np.ndarray, actions: np.ndarray, rewards: np.ndarray, terminated: bool) -> None:
        """Store a whole episode: ``frames [T+1,3,S,S]``, ``actions [T,A]``, ``rewards [T]``."""
        frames = np.asarray(frames, dtype=np.uint8)
        actions = np.asarray(actions, dtype=np.float32)
        rewards = np.asarray(rewards, dtype=np.float32)
        t = len(rewards)
        if t < 1 or frames.shape[0] != t + 1 or actions.shape[0] != t or frames.ndim != 4:
            raise ValueError(
                f"episode shapes disagree: frames {frames.shape}, actions {actions.shape}, rewards {rewards.shape}"
            )
        discounts = np.ones(t + 1, dtype=np.float32)
        if terminated:
            discounts[t] = 0.0
        episode = {
            "frames": frames,
            "actions": np.concatenate([np.zeros((1, actions.shape[1]), np.float32), actions]),
            "rewards": np.concatenate([np.zeros(1, np.float32), rewards]),
            "discounts": discounts,
        }
        size = len(self)
        while self.episodes and size + t > self.capacity:
            size -= len(self.episodes.pop(0)["rewards"]) - 1
        self.episodes.append(episode)

    # ------------------------------------------------------------------------------------------------
    # sampling
    # ------------------------------------------------------------------------------------------------

    def stack(self, episode: dict[str, np.ndarray], t: int) -> np.ndarray:
        """Observation at time ``t``: ``uint8 [3F, S, S]`` (first frame repeated before the start)."""
        idx = [max(t - self.frame_stack + 1 + i, 0) for i in range(self.frame_stack)]
        return np.concatenate([episode["frames"][i] for i in idx], axis=0)

    def nstep_target(self, episode: dict[str, np.ndarray], idx: int) -> tuple[float, float]:
        """``(reward, discount)`` of the n-step return starting at ``idx`` (module docstring)."""
        reward, discount = 0.0, 1.0
        for i in range(self.nstep):
            reward += discount * float(episode["rewards"][idx + i])
            discount *= float(episode["discounts"][idx + i]) * self.discount
        return reward, discount

    def _max_start(self, length: int, window: int) -> int:
        """Largest valid start (``idx >= 1`` for transitions, ``s >= 0`` for windows); below it when too short."""
        if window == 0:
            return length - self.nstep + 1
        return length - (window - 1)

    def can_sample(self, window: int = 0) -> bool:
        """Whether transitions (and, with ``window``, windows) can be sampled."""
        lengths = [len(ep["rewards"]) - 1 for ep in self.episodes]
        ok = any(self._max_start(n, 0) >= 1 for n in lengths)
        return ok and (window == 0 or any(self._max_start(n, window) >= 0 for n in lengths))

    def mean_frame(self) -> np.ndarray:
        """The mean stored frame, ``float32 [3, S, S]`` in [0, 1] (the mean predictor of a frame)."""
        if not self.episodes:
            raise ValueError("replay is empty")
        total = sum(ep["frames"].astype(np.float64).sum(axis=0) for ep in self.episodes)
        count = sum(len(ep["frames"]) for ep in self.episodes)
        return (np.asarray(total) / count / 255.0).astype(np.float32)

    def sample(self, batch_size: int, window: int = 0) -> Batch:
        """``batch_size`` transitions from every step, plus ``batch_size`` windows of ``window = F + H`` frames
        when ``window > 0`` (module docstring)."""
        if window and window <= self.frame_stack:
            raise ValueError(f"window must exceed frame_stack = {self.frame_stack} (F + horizon), got {window}")
        if not self.can_sample(window):
            raise ValueError(f"replay holds no episode long enough to sample (window={window}, nstep={self.nstep})")
        eligible = [ep for ep in self.episodes if self._max_start(len(ep["rewards"]) - 1, 0) >= 1]
        obs, act, rew, disc, nxt = [], [], [], [], []
        for e in self.rng.integers(0, len(eligible), size=batch_size):
            ep = eligible[int(e)]
            idx = int(self.rng.integers(1, self._max_start(len(ep["rewards"]) - 1, 0) + 1))
            obs.append(self.stack(ep, idx - 1))
            act.append(ep["actions"][idx])
            r, d = self.nstep_target(ep, idx)
            rew.append(r)
            disc.append(d)
            nxt.append(self.stack(ep, idx + self.nstep - 1))
        wf, wa = [], []
        if window:
            long_enough = [ep for ep in self.episodes if self._max_start(len(ep["rewards"]) - 1, window) >= 0]
            for e in self.rng.integers(0, len(long_enough), size=batch_size):
                ep = long_enough[int(e)]
                start = int(self.rng.integers(0, self._max_start(len(ep["rewards"]) - 1, window) + 1))
                wf.append(ep["frames"][start : start + window])
                wa.append(ep["actions"][start : start + window])
        return Batch(
            obs=np.stack(obs),
            action=np.stack(act).astype(np.float32),
            reward=np.asarray(rew, dtype=np.float32)[:, None],
            discount=np.asarray(disc, dtype=np.float32)[:, None],
            next_obs=np.stack(nxt),
            window_frames=np.stack(wf) if window else None,
            window_actions=np.stack(wa).astype(np.float32) if window else None,
        )

    # ------------------------------------------------------------------------------------------------
    # checkpointing (tensors and strings only: loadable with torch.load(weights_only=True))
    # ------------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Completed episodes (concatenated), their lengths and the RNG state. Unfinished steps are not kept."""
        lengths = [len(ep["rewards"]) for ep in self.episodes]
        state: dict[str, Any] = {
            "lengths": torch.tensor(lengths, dtype=torch.int64),
            "rng": json.dumps(self.rng.bit_generator.state),
            "capacity": self.capacity,
            "frame_stack": self.frame_stack,
            "nstep": self.nstep,
            "discount": self.discount,
        }
        for key in ("frames", "actions", "rewards", "discounts"):
            if self.episodes:
                state[key] = torch.from_numpy(np.concatenate([ep[key] for ep in self.episodes]))
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Inverse of :meth:`state_dict`; the buffer's settings must match."""
        for key in ("capacity", "frame_stack", "nstep"):
            if int(state[key]) != getattr(self, key):
                raise ValueError(f"replay checkpoint has {key}={state[key]}, this buffer {getattr(self, key)}")
        self.rng.bit_generator.state = json.loads(state["rng"])
        self.episodes = []
        self._pending = None
        lengths = state["lengths"].tolist()
        offset = 0
        for n in lengths:
            self.episodes.append(
                {k: state[k][offset : offset + n].numpy().copy() for k in ("frames", "actions", "rewards", "discounts")}
            )
            offset += n
