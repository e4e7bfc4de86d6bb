"""Pixel-observation wrappers over gymnasium's MuJoCo v5 tasks.

The task list (:mod:`~iclr26_rl.envs.registry`) is light; the wrappers import gymnasium and mujoco
and are loaded on first attribute access, so configs can validate env ids without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_rl.envs.registry import DEFAULT_EPISODE_STEPS, MUJOCO_V5_ENVS, REACHING_ENVS, check_env_id
from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_rl.envs.pixels import (
        CAMERA_PRESETS,
        ActionRepeat,
        FrameStack,
        MujocoPixels,
        agent_geom_flags,
        make_pixel_env,
        make_vector_env,
    )

_LAZY = {
    "CAMERA_PRESETS",
    "ActionRepeat",
    "FrameStack",
    "MujocoPixels",
    "agent_geom_flags",
    "make_pixel_env",
    "make_vector_env",
}

__all__ = [
    "CAMERA_PRESETS",
    "DEFAULT_EPISODE_STEPS",
    "MUJOCO_V5_ENVS",
    "REACHING_ENVS",
    "ActionRepeat",
    "FrameStack",
    "MujocoPixels",
    "agent_geom_flags",
    "check_env_id",
    "make_pixel_env",
    "make_vector_env",
]

__getattr__, __dir__ = lazy_exports(__name__, {name: "iclr26_rl.envs.pixels" for name in _LAZY}, __all__)
