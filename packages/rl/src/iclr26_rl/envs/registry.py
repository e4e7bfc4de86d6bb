"""The gymnasium MuJoCo v5 task ids this package supports (a light module: no gymnasium import).

Configs validate ``env`` against this list at construction time, so ``iclr26 list`` and config
validation never import gymnasium or mujoco.
"""

from __future__ import annotations

from iclr26_shared.errors import ConfigError

__all__ = ["DEFAULT_EPISODE_STEPS", "MUJOCO_V5_ENVS", "REACHING_ENVS", "check_env_id"]

#: gymnasium's MuJoCo v5 tasks (their XML assets ship inside the ``gymnasium`` wheel).
MUJOCO_V5_ENVS: tuple[str, ...] = (
    "Reacher-v5",
    "Pusher-v5",
    "HalfCheetah-v5",
    "Hopper-v5",
    "Walker2d-v5",
    "Ant-v5",
    "Swimmer-v5",
    "InvertedPendulum-v5",
    "InvertedDoublePendulum-v5",
    "Humanoid-v5",
    "HumanoidStandup-v5",
)

#: Simulator steps per episode (gymnasium's ``max_episode_steps``) of each task.
DEFAULT_EPISODE_STEPS: dict[str, int] = {env: 1000 for env in MUJOCO_V5_ENVS} | {
    "Reacher-v5": 50,
    "Pusher-v5": 100,
}

#: The reaching/manipulation tasks (the paper's Meta-World setting has an arm and a target/object).
REACHING_ENVS: tuple[str, ...] = ("Reacher-v5", "Pusher-v5")


def check_env_id(field: str, env_id: str) -> None:
    """Raise :class:`ConfigError` naming ``field`` unless ``env_id`` is a supported MuJoCo v5 task."""
    if env_id not in MUJOCO_V5_ENVS:
        raise ConfigError(field, env_id, "a gymnasium MuJoCo v5 task: " + ", ".join(MUJOCO_V5_ENVS))
