"""Pixel observations for gymnasium's MuJoCo v5 tasks: render, action repeat, frame stack.

The stack built by :func:`make_pixel_env` (innermost first)::

    gym.make(env_id)                      # MuJoCo v5 task, TimeLimit included
    RescaleAction(-1, 1)                  # the agent always acts in [-1, 1]^A
    ActionRepeat(k)                       # one agent step = k simulator steps, rewards summed
    MujocoPixels(size, camera)            # obs: uint8 [3, S, S] frame; info["state"]: the state vector
    FrameStack(n)                         # obs: uint8 [3n, S, S], oldest frame first

Rendering uses :class:`mujoco.Renderer` directly (its own OpenGL context, made current before every
frame) instead of gymnasium's ``render_mode="rgb_array"`` viewer: gymnasium only makes an offscreen
context current when one env owns several viewers, so with two envs in one process (train + eval)
frames silently come from the wrong context (all zeros under EGL after the other env closes).
With ``fast_render`` shadows, reflections and the skybox are switched off: ~4-10 ms per 84x84 frame
on CPU (EGL/llvmpipe) instead of 45-60 ms (research/offline-data.md §11).

``terminated`` vs ``truncated``: the wrappers pass both flags through unchanged, and
:class:`ActionRepeat` stops repeating as soon as either is set, so a time-limit truncation is never
reported as a termination (the replay buffer bootstraps through truncations, not terminations).

Set ``MUJOCO_GL=egl`` before this module is imported on a headless machine.
"""

# mujoco's pybind11 module ships no type stubs (MjModel, mjtObj, Renderer, ... exist only at runtime), and
# gymnasium's Env has no `model`/`data` until it is a MujocoEnv: attribute checks are off for this file.
# pyright: reportAttributeAccessIssue=false

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Literal

os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from gymnasium import spaces  # noqa: E402

from iclr26_rl._llvm_guard import preload_triton  # noqa: E402
from iclr26_rl.envs.registry import check_env_id  # noqa: E402

__all__ = [
    "CAMERA_PRESETS",
    "ActionRepeat",
    "CameraName",
    "FrameStack",
    "MujocoPixels",
    "agent_geom_flags",
    "make_pixel_env",
    "make_vector_env",
]

CameraName = Literal["task", "gym"]

#: Per-task camera for ``camera="task"``: free-camera attributes applied over gymnasium's default
#: view. Reacher's default view shows the 21 cm arm as a few pixels at 64x64, so we look straight
#: down on the 60 cm arena, as dm_control's reacher does. Tasks not listed keep gymnasium's view.
CAMERA_PRESETS: dict[str, dict[str, Any]] = {
    "Reacher-v5": {"lookat": (0.0, 0.0, 0.0), "distance": 0.62, "elevation": -90.0, "azimuth": 90.0},
    "Pusher-v5": {"lookat": (0.2, -0.25, -0.3), "distance": 2.4, "elevation": -55.0, "azimuth": 90.0},
}


def _load_llvm_users_first() -> None:
    """Load triton's LLVM before the first GL context (:func:`iclr26_rl._llvm_guard.preload_triton`).

    ``import iclr26_rl`` already did; this keeps the order for code that reaches this module otherwise.
    """
    preload_triton()


def agent_geom_flags(model: mujoco.MjModel) -> np.ndarray:
    """``[ngeom]`` bool: True for geoms of the agent (robot), False for the scene.

    A body belongs to the agent when the subtree under its top-level ancestor (the child of the world
    body it hangs from) contains an actuated joint. Reacher: ``body0 → body1 → fingertip`` are the
    agent, the target (unactuated slide joints) and the arena are scene; Pusher: the 7-DoF arm is
    the agent, the object and goal are scene.
    """
    nbody = model.nbody
    root = np.zeros(nbody, dtype=np.int64)
    for b in range(nbody):
        cur = b
        while cur != 0 and model.body_parentid[cur] != 0:
            cur = int(model.body_parentid[cur])
        root[b] = cur
    actuated_root = np.zeros(nbody, dtype=bool)
    for a in range(model.nu):
        if int(model.actuator_trntype[a]) in (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT)):
            joint = int(model.actuator_trnid[a, 0])
            actuated_root[root[int(model.jnt_bodyid[joint])]] = True
    body_is_agent = actuated_root[root] & (root != 0)
    return body_is_agent[model.geom_bodyid]


def _free_camera(env: gym.Env, env_id: str, camera: CameraName) -> mujoco.MjvCamera:
    """gymnasium's default free camera for the task, then our per-task preset on top (``camera="task"``)."""
    base = env.unwrapped
    model, data = base.model, base.data
    mujoco.mj_forward(model, data)
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.fixedcamid = -1
    for i in range(3):
        cam.lookat[i] = float(np.median(data.geom_xpos[:, i]))
    cam.distance = float(model.stat.extent)
    renderer = getattr(base, "mujoco_renderer", None)
    settings: dict[str, Any] = dict(getattr(renderer, "default_cam_config", None) or {})
    if camera == "task":
        settings.update(CAMERA_PRESETS.get(env_id, {}))
    for key, value in settings.items():
        if key == "lookat":
            cam.lookat[:] = np.asarray(value, dtype=np.float64)
        elif key == "trackbodyid":
            # A tracking camera moves with the body; our presets give fixed views, so a preset that
            # sets lookat switches tracking off (pixels then change only when the scene changes).
            if camera == "gym" or "lookat" not in CAMERA_PRESETS.get(env_id, {}):
                cam.trackbodyid = int(value)
                if int(value) >= 0:
                    cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        else:
            setattr(cam, key, value)
    return cam


class ActionRepeat(gym.Wrapper):
    """Repeat each action ``repeat`` times, summing the rewards; stop early when the episode ends.

    ``terminated`` and ``truncated`` of the last inner step are returned unchanged.
    """

    def __init__(self, env: gym.Env, repeat: int) -> None:
        if repeat < 1:
            raise ValueError(f"action repeat must be >= 1, got {repeat}")
        super().__init__(env)
        self.repeat = int(repeat)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        total = float(reward)
        for _ in range(self.repeat - 1):
            if terminated or truncated:
                break
            obs, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
        return obs, total, bool(terminated), bool(truncated), info


class MujocoPixels(gym.Wrapper):
    """Replace the observation with a rendered RGB frame ``uint8 [3, size, size]`` (channel first).

    The simulator's own observation moves to ``info["state"]``. :meth:`agent_mask` renders the
    segmentation of the same view and returns where the agent is (``bool [size, size]``).
    """

    def __init__(
        self, env: gym.Env, env_id: str, size: int = 84, camera: CameraName = "task", fast_render: bool = True
    ) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not hasattr(base, "model") or not hasattr(base, "data"):
            raise TypeError(f"{env_id} is not a MuJoCo environment (no model/data)")
        self._model: mujoco.MjModel = base.model
        self._data: mujoco.MjData = base.data
        self.size = int(size)
        self.fast_render = bool(fast_render)
        _load_llvm_users_first()
        self._renderer: Any = mujoco.Renderer(self._model, self.size, self.size)
        self._camera = _free_camera(env, env_id, camera)
        self._agent_geoms = agent_geom_flags(self._model)
        self.observation_space = spaces.Box(0, 255, (3, self.size, self.size), dtype=np.uint8)

    def _update_scene(self) -> None:
        self._renderer.update_scene(self._data, camera=self._camera)
        if self.fast_render:
            flags = self._renderer.scene.flags
            flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
            flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
            flags[mujoco.mjtRndFlag.mjRND_SKYBOX] = 0

    def frame(self) -> np.ndarray:
        """The current view as ``uint8 [3, size, size]``."""
        self._update_scene()
        return np.ascontiguousarray(self._renderer.render().transpose(2, 0, 1))

    def agent_mask(self) -> np.ndarray:
        """``bool [size, size]``: pixels showing a geom of the agent (see :func:`agent_geom_flags`)."""
        self._update_scene()
        self._renderer.enable_segmentation_rendering()
        try:
            seg = self._renderer.render()
        finally:
            self._renderer.disable_segmentation_rendering()
        objid, objtype = seg[..., 0], seg[..., 1]
        is_geom = (objtype == int(mujoco.mjtObj.mjOBJ_GEOM)) & (objid >= 0)
        mask = np.zeros(objid.shape, dtype=bool)
        mask[is_geom] = self._agent_geoms[objid[is_geom]]
        return mask

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        state, info = self.env.reset(**kwargs)
        return self.frame(), {**info, "state": state}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        state, reward, terminated, truncated, info = self.env.step(action)
        return self.frame(), float(reward), bool(terminated), bool(truncated), {**info, "state": state}

    def close(self) -> None:
        renderer = getattr(self, "_renderer", None)
        if renderer is not None:
            renderer.close()
            self._renderer = None
        super().close()


class FrameStack(gym.Wrapper):
    """Stack the last ``n`` frames along channels: ``uint8 [3n, S, S]``, oldest first.

    After ``reset`` the stack holds ``n`` copies of the first frame (the usual DrQ-v2 convention).
    """

    def __init__(self, env: gym.Env, n: int) -> None:
        if n < 1:
            raise ValueError(f"frame stack must be >= 1, got {n}")
        super().__init__(env)
        self.n = int(n)
        shape = env.observation_space.shape
        if shape is None or len(shape) != 3:
            raise ValueError(f"FrameStack needs [C, H, W] frames, got observation shape {shape}")
        c, h, w = shape
        self._frames: deque[np.ndarray] = deque(maxlen=self.n)
        self.observation_space = spaces.Box(0, 255, (c * self.n, h, w), dtype=np.uint8)

    def _obs(self) -> np.ndarray:
        return np.concatenate(list(self._frames), axis=0)

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        frame, info = self.env.reset(**kwargs)
        for _ in range(self.n):
            self._frames.append(frame)
        return self._obs(), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        frame, reward, terminated, truncated, info = self.env.step(action)
        self._frames.append(frame)
        return self._obs(), float(reward), terminated, truncated, info

    @property
    def last_frame(self) -> np.ndarray:
        """The newest frame ``uint8 [3, S, S]``."""
        return self._frames[-1]


def make_pixel_env(
    env_id: str = "Reacher-v5",
    *,
    image_size: int = 84,
    frame_stack: int = 3,
    action_repeat: int = 2,
    camera: CameraName = "task",
    fast_render: bool = True,
    max_episode_steps: int | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
) -> FrameStack:
    """Build the pixel-observation stack described in the module docstring.

    Args:
        env_id: A gymnasium MuJoCo v5 task (see :data:`~iclr26_rl.envs.registry.MUJOCO_V5_ENVS`).
        image_size: Frame side S (64 or 84 in the paper family; any size >= 16 renders).
        frame_stack: Frames per observation n (the paper's context t_c = 3).
        action_repeat: Simulator steps per agent step k (2 in the paper).
        camera: ``"task"`` (our per-task preset, :data:`CAMERA_PRESETS`) or ``"gym"`` (gymnasium's view).
        fast_render: Switch off shadows, reflections and skybox.
        max_episode_steps: Simulator steps per episode (None: the task's default, e.g. 50 for Reacher).
        env_kwargs: Extra keyword arguments for ``gym.make`` (e.g. reward weights).

    Returns:
        The wrapped env; observations ``uint8 [3n, S, S]``, actions in ``[-1, 1]^A``.
    """
    check_env_id("env", env_id)
    if image_size < 16:
        raise ValueError(f"image_size must be >= 16, got {image_size}")
    kwargs = dict(env_kwargs or {})
    if max_episode_steps is not None:
        kwargs["max_episode_steps"] = int(max_episode_steps)
    env = gym.make(env_id, **kwargs)
    shape = env.action_space.shape
    if shape is None:
        raise ValueError(f"{env_id} has no continuous action space")
    unit = np.ones(shape, dtype=np.float32)
    env = gym.wrappers.RescaleAction(env, -unit, unit)
    env = ActionRepeat(env, action_repeat)
    env = MujocoPixels(env, env_id, size=image_size, camera=camera, fast_render=fast_render)
    return FrameStack(env, frame_stack)


def make_vector_env(env_id: str = "Reacher-v5", num_envs: int = 4, **kwargs: Any) -> gym.vector.SyncVectorEnv:
    """``num_envs`` copies of :func:`make_pixel_env` stepped together (gymnasium ``SyncVectorEnv``).

    Observations are ``uint8 [num_envs, 3n, S, S]``; finished sub-envs reset on their next step
    (gymnasium's ``NEXT_STEP`` autoreset), and ``terminated``/``truncated`` are per env.
    """
    if num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")

    def factory() -> Callable[[], gym.Env]:
        return lambda: make_pixel_env(env_id, **kwargs)

    return gym.vector.SyncVectorEnv([factory() for _ in range(num_envs)])
