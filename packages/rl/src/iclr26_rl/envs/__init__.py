"""Pixel-observation wrappers over gymnasium's MuJoCo v5 tasks (imports gymnasium and mujoco)."""

from iclr26_rl.envs.pixels import (
    CAMERA_PRESETS,
    ActionRepeat,
    FrameStack,
    MujocoPixels,
    agent_geom_flags,
    make_pixel_env,
    make_vector_env,
)
from iclr26_rl.envs.registry import MUJOCO_V5_ENVS, check_env_id

__all__ = [
    "CAMERA_PRESETS",
    "MUJOCO_V5_ENVS",
    "ActionRepeat",
    "FrameStack",
    "MujocoPixels",
    "agent_geom_flags",
    "check_env_id",
    "make_pixel_env",
    "make_vector_env",
]
