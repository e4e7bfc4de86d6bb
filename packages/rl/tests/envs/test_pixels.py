"""Pixel wrappers: shapes, dtypes, frame stacking, action repeat, terminated vs truncated, masks."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from iclr26_rl.envs import ActionRepeat, agent_geom_flags, make_pixel_env, make_vector_env


@pytest.fixture(scope="module")
def reacher() -> Any:
    env = make_pixel_env("Reacher-v5", image_size=64, frame_stack=3, action_repeat=2)
    yield env
    env.close()


def test_observation_shape_dtype_and_state(reacher: Any) -> None:
    obs, info = reacher.reset(seed=0)
    assert obs.shape == (9, 64, 64) and obs.dtype == np.uint8
    assert reacher.observation_space.contains(obs)
    assert info["state"].shape == (10,)
    assert np.allclose(reacher.action_space.low, -1) and np.allclose(reacher.action_space.high, 1)
    assert obs.std() > 5  # a real rendered scene, not a blank frame


def test_frame_stack_shifts_frames(reacher: Any) -> None:
    obs0, _ = reacher.reset(seed=1)
    assert np.array_equal(obs0[0:3], obs0[3:6]) and np.array_equal(obs0[3:6], obs0[6:9])
    obs1, *_ = reacher.step(np.ones(2, np.float32))
    assert np.array_equal(obs1[0:6], obs0[3:9])
    assert np.array_equal(obs1[6:9], reacher.last_frame)
    assert not np.array_equal(obs1[6:9], obs0[6:9])  # the arm moved


def test_reacher_episode_is_truncated_not_terminated(reacher: Any) -> None:
    reacher.reset(seed=2)
    flags = []
    for _ in range(30):
        _, _, terminated, truncated, _ = reacher.step(np.zeros(2, np.float32))
        flags.append((terminated, truncated))
        if terminated or truncated:
            break
    assert len(flags) == 25  # 50 simulator steps / action repeat 2
    assert flags[-1] == (False, True)


class _Counter(gym.Env):
    """Reward 1 per step; terminates at step ``end`` when ``terminate`` else truncates there."""

    observation_space = spaces.Box(0, 10, (1,), np.float32)
    action_space = spaces.Box(-1, 1, (1,), np.float32)

    def __init__(self, end: int, terminate: bool) -> None:
        self.end, self.terminate, self.t = end, terminate, 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        done = self.t >= self.end
        return np.full(1, self.t, np.float32), 1.0, done and self.terminate, done and not self.terminate, {}


@pytest.mark.parametrize("terminate", [True, False])
def test_action_repeat_sums_rewards_and_stops_at_episode_end(terminate: bool) -> None:
    env = ActionRepeat(_Counter(end=5, terminate=terminate), 2)
    env.reset()
    out = [env.step(np.zeros(1, np.float32)) for _ in range(3)]
    assert [o[1] for o in out] == [2.0, 2.0, 1.0]
    assert [float(o[0][0]) for o in out] == [2.0, 4.0, 5.0]
    assert (out[-1][2], out[-1][3]) == (terminate, not terminate)
    assert not out[0][2] and not out[0][3]


def test_agent_geoms_and_mask(reacher: Any) -> None:
    pix = reacher.env
    model = pix.unwrapped.model
    flags = agent_geom_flags(model)
    import mujoco

    mj: Any = mujoco  # no type stubs for the pybind11 module
    names = {mj.mj_id2name(model, mj.mjtObj.mjOBJ_GEOM, g): bool(flags[g]) for g in range(model.ngeom)}
    assert names["link0"] and names["link1"] and names["fingertip"]
    assert not names["target"] and not names["ground"] and not names["sideS"]
    reacher.reset(seed=3)
    mask = pix.agent_mask()
    assert mask.shape == (64, 64) and mask.dtype == bool
    assert 0 < mask.mean() < 0.2


def test_two_envs_render_independently() -> None:
    # gymnasium's own rgb_array viewer renders blank frames here after the other env closes.
    a = make_pixel_env("Reacher-v5", image_size=64)
    b = make_pixel_env("Reacher-v5", image_size=64)
    oa, _ = a.reset(seed=0)
    ob, _ = b.reset(seed=0)
    assert np.array_equal(oa, ob)
    b.close()
    oa2, *_ = a.step(np.zeros(2, np.float32))
    assert oa2.std() > 5
    a.close()


def test_vector_env_shapes() -> None:
    venv = make_vector_env("Reacher-v5", 2, image_size=64, frame_stack=2)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (2, 6, 64, 64) and obs.dtype == np.uint8
    obs, reward, terminated, truncated, _ = venv.step(np.zeros((2, 2), np.float32))
    assert obs.shape == (2, 6, 64, 64) and reward.shape == (2,) and terminated.shape == truncated.shape == (2,)
    venv.close()


def test_unknown_env_is_rejected() -> None:
    from iclr26_shared.errors import ConfigError

    with pytest.raises(ConfigError, match="env"):
        make_pixel_env("CartPole-v1")
