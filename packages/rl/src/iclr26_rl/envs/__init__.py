"""Pixel-observation wrappers over gymnasium's MuJoCo v5 tasks.

The task list (:mod:`~iclr26_rl.envs.registry`) is light; the wrappers import gymnasium and mujoco
and are loaded on first attribute access, so configs can validate env ids without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from iclr26_rl.envs.registry import DEFAULT_EPISODE_STEPS, MUJOCO_V5_ENVS, REACHING_ENVS, check_env_id

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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module("iclr26_rl.envs.pixels"), name)
    raise AttributeError(f"module 'iclr26_rl.envs' has no attribute {name!r}")
