"""Replay buffer: n-step targets and context+horizon windows against hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26_rl.data import EpisodeReplay


def _episode(t: int, size: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frames filled with their time index, action t = t, reward t = 10 t."""
    frames = np.stack([np.full((3, size, size), i, np.uint8) for i in range(t + 1)])
    actions = np.arange(1, t + 1, dtype=np.float32)[:, None]
    rewards = 10.0 * np.arange(1, t + 1, dtype=np.float32)
    return frames, actions, rewards


def test_nstep_target_hand_computed() -> None:
    buf = EpisodeReplay(100, frame_stack=2, nstep=2, discount=0.5)
    buf.add_episode(*_episode(4), terminated=True)
    ep = buf.episodes[0]
    assert buf.nstep_target(ep, 1) == pytest.approx((10 + 0.5 * 20, 0.25))
    assert buf.nstep_target(ep, 3) == pytest.approx((30 + 0.5 * 40, 0.0))  # bootstraps nothing past termination
    trunc = EpisodeReplay(100, frame_stack=2, nstep=2, discount=0.5)
    trunc.add_episode(*_episode(4), terminated=False)
    assert trunc.nstep_target(trunc.episodes[0], 3) == pytest.approx((50.0, 0.25))  # truncation keeps bootstrap


def test_transitions_match_their_indices() -> None:
    f, n = 3, 2
    buf = EpisodeReplay(100, frame_stack=f, nstep=n, discount=0.9, seed=1)
    buf.add_episode(*_episode(6), terminated=False)
    batch = buf.sample(64)
    for i in range(64):
        t = int(batch.obs[i, -1, 0, 0])  # obs = stack(idx - 1)
        idx = t + 1
        assert [int(batch.obs[i, 3 * k, 0, 0]) for k in range(f)] == [max(t - 2, 0), max(t - 1, 0), t]
        assert batch.action[i, 0] == idx
        assert batch.reward[i, 0] == pytest.approx(10 * idx + 0.9 * 10 * (idx + 1))
        assert batch.discount[i, 0] == pytest.approx(0.81)
        assert int(batch.next_obs[i, -1, 0, 0]) == idx + n - 1
        assert 1 <= idx <= 6 - n + 1


def test_windows_hold_context_future_and_actions() -> None:
    f, h, n = 2, 3, 2
    buf = EpisodeReplay(100, frame_stack=f, nstep=n, discount=1.0, seed=2)
    buf.add_episode(*_episode(8), terminated=False)
    batch = buf.sample(80, window=f + h)
    assert batch.window_frames is not None and batch.window_actions is not None
    assert batch.window_frames.shape == (80, f + h, 3, 4, 4)
    assert batch.window_actions.shape == (80, f + h, 1)
    starts = set()
    for i in range(80):
        s = int(batch.window_frames[i, 0, 0, 0, 0])
        starts.add(s)
        assert [int(x) for x in batch.window_frames[i, :, 0, 0, 0]] == list(range(s, s + f + h))
        assert batch.window_actions[i, :, 0].tolist() == list(range(s, s + f + h))  # action i led to frame s+i
    assert starts == set(range(0, 8 - (f + h) + 2))  # s in 0 .. T - (F+H-1): full windows only


def test_critic_transitions_cover_every_step_with_windows() -> None:
    """The EF agent's critic sees the same transitions as DrQ-v2's: idx in 1..T-n+1, also the last steps
    that no full window reaches (paper §4: EF adds a loss, it does not change the RL data)."""
    f, h, n, t = 3, 10, 3, 25
    buf = EpisodeReplay(100, frame_stack=f, nstep=n, discount=1.0, seed=4)
    buf.add_episode(*_episode(t), terminated=False)
    batch = buf.sample(2000, window=f + h)
    assert batch.window_frames is not None
    idx = {int(a) for a in batch.action[:, 0]}
    assert idx == set(range(1, t - n + 2))
    assert max(int(x) for x in batch.window_frames[:, -1, 0, 0, 0]) == t  # windows end at most at the last frame


def test_mean_frame_is_the_mean_over_stored_frames() -> None:
    buf = EpisodeReplay(100, frame_stack=2, nstep=1, discount=1.0)
    buf.add_episode(*_episode(4), terminated=False)  # frames 0..4
    buf.add_episode(*_episode(2), terminated=False)  # frames 0..2
    assert buf.mean_frame() == pytest.approx(np.full((3, 4, 4), (10 + 3) / 8 / 255, np.float32))


def test_short_episodes_are_not_sampled_and_capacity_drops_oldest() -> None:
    buf = EpisodeReplay(10, frame_stack=3, nstep=3, discount=0.99)
    buf.add_episode(*_episode(2), terminated=False)
    assert not buf.can_sample()
    with pytest.raises(ValueError, match="long enough"):
        buf.sample(4)
    buf.add_episode(*_episode(6), terminated=False)
    buf.add_episode(*_episode(4), terminated=False)
    assert len(buf) == 10 and buf.num_episodes == 2  # the 2-step episode was dropped
    with pytest.raises(ValueError, match="window"):
        buf.sample(2, window=3)


def test_incremental_add_and_state_dict_round_trip() -> None:
    buf = EpisodeReplay(100, frame_stack=2, nstep=1, discount=0.9, seed=3)
    frames, actions, rewards = _episode(5)
    buf.start_episode(frames[0], 1)
    for t in range(5):
        buf.add(actions[t], float(rewards[t]), frames[t + 1], terminated=t == 4, truncated=False)
    assert buf.num_episodes == 1 and buf.episodes[0]["discounts"][-1] == 0.0
    state = buf.state_dict()
    assert isinstance(state["frames"], torch.Tensor)
    other = EpisodeReplay(100, frame_stack=2, nstep=1, discount=0.9, seed=99)
    other.load_state_dict(state)
    a, b = buf.sample(8, window=3), other.sample(8, window=3)
    assert a.window_frames is not None and b.window_frames is not None
    assert np.array_equal(a.window_frames, b.window_frames) and np.array_equal(a.reward, b.reward)
