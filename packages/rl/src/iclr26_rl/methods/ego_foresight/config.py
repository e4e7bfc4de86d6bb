"""Config and presets of ``ego-foresight`` (no heavy imports: read by ``iclr26 list``).

Defaults are the paper's (Ego-Foresight §4 and Appendix A, the reference repository's Hydra configs): DrQ-v2
with lr 1e-4, batch 256, feature 50, hidden 1024, τ 0.01, update every 2 steps, 3-step returns,
γ 0.99, σ linear 1.0→0.1 over 500k steps, clip 0.3, 250k replay, 4000 seed frames, 2000 uniform
steps; EF with n = 2048, l = 32, H = 10, β = 1, FC_ψ hidden [512, 512], 64-channel decoder and
12 500 motor-babbling steps; 3 stacked 84×84 frames, action repeat 2, 2.5M frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_rl.envs.registry import DEFAULT_EPISODE_STEPS, check_env_id
from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, validate
from iclr26_shared.errors import ConfigError

__all__ = ["AGENTS", "PRESETS", "AgentChoice", "EgoForesightConfig"]

AgentChoice = Literal["both", "drqv2", "drqv2-ef"]
#: Agent names trained by ``agent="both"``, baseline first.
AGENTS: tuple[str, ...] = ("drqv2", "drqv2-ef")


def _distinct(values: tuple[int, ...]) -> bool:
    """distinct seeds"""
    return len(set(values)) == len(values)


@dataclass(frozen=True)
class EgoForesightConfig:
    """DrQ-v2 with and without Ego-Foresight on a gymnasium MuJoCo v5 task from pixels."""

    env: str = "Reacher-v5"
    """gymnasium MuJoCo v5 task (Reacher-v5, Pusher-v5, HalfCheetah-v5, ...)."""
    agent: AgentChoice = "both"
    """Which agents to train: drqv2 (baseline), drqv2-ef (with Ego-Foresight) or both (for the claims)."""
    train_seeds: Annotated[tuple[NonNegInt, ...], at.MinLen(1), at.Predicate(_distinct)] = (1, 2, 3, 4, 5)
    """Training seeds of each agent within one run (each offset by 1000 x --seed)."""
    image_size: Literal[64, 84] = 84
    """Frame side in pixels (64 or 84)."""
    frame_stack: PosInt = 3
    """Stacked frames per observation (the EF context t_c)."""
    action_repeat: PosInt = 2
    """Simulator steps per agent step (frames = steps x action_repeat)."""
    camera: Literal["task", "gym"] = "task"
    """task: our per-task view (Reacher top-down); gym: gymnasium's default camera."""
    fast_render: bool = True
    """Render without shadows, reflections and skybox (~5x faster on CPU)."""
    max_episode_steps: NonNegInt = 0
    """Simulator steps per episode; 0 keeps the task's default (Reacher 50, Pusher 100)."""
    steps: PosInt = 1_250_000
    """Agent steps per training run (2.5M frames at action repeat 2)."""
    seed_steps: NonNegInt = 2000
    """Agent steps collected before the first update (4000 seed frames)."""
    expl_steps: NonNegInt = 2000
    """Agent steps with uniform random actions (DrQ-v2's num_expl_steps)."""
    babbling_steps: NonNegInt = 12_500
    """EF motor-babbling steps: actions clip(U[-b, b], -1, 1)."""
    babbling_scale: PosFloat = 4.0
    """b of motor babbling (4: mostly bang-bang actions)."""
    baseline_encoder: Literal["plain", "pool"] = "pool"
    """Encoder of the DrQ-v2 baseline: pool (default: the EF agent's AvgPool(4) + Linear(repr_dim), so the
    return comparison changes one thing, the EF loss) or plain (DrQ-v2's reference encoder: conv features
    flattened, 32x35x35 at 84 px; the variant that compares with published DrQ-v2, which also changes the
    encoder). The EF agent always uses pool: its agent/scene split needs the n-dim projection."""
    babble_baseline: bool = False
    """Also give the DrQ-v2 baseline motor babbling (off in the paper's comparison)."""
    batch_size: PosInt = 256
    """Replay batch size."""
    lr: PosFloat = 1e-4
    """Adam learning rate of every module."""
    feature_dim: PosInt = 50
    """Actor/critic trunk width."""
    hidden_dim: PosInt = 1024
    """Actor/critic MLP width."""
    repr_dim: PosInt = 2048
    """Encoder output size n (EF: agent + scene parts)."""
    conv_channels: PosInt = 32
    """Channels of the DrQ-v2 conv encoder."""
    agent_dim: PosInt = 32
    """EF agent-part size l (the bottleneck), 1 <= l < repr_dim."""
    horizon: PosInt = 10
    """EF prediction horizon H (future frames per window)."""
    beta: NonNegFloat = 1.0
    """Weight of the EF loss: L = L_critic + beta * L_ef."""
    rollout_hidden: Annotated[tuple[PosInt, ...], at.MinLen(1)] = (512, 512)
    """Hidden sizes of the EF recurrent block FC_psi."""
    decoder_channels: PosInt = 64
    """Channels of the EF frame decoder."""
    critic_tau: Annotated[float, at.Interval(gt=0, le=1)] = 0.01
    """Soft target update rate."""
    update_every: PosInt = 2
    """Agent steps per gradient update."""
    nstep: PosInt = 3
    """n of the n-step return."""
    discount: Annotated[float, at.Interval(ge=0, le=1)] = 0.99
    """Discount gamma."""
    std_init: NonNegFloat = 1.0
    """Exploration std at step 0."""
    std_final: NonNegFloat = 0.1
    """Exploration std after std_steps."""
    std_steps: PosInt = 500_000
    """Agent steps of the linear std schedule."""
    std_clip: PosFloat = 0.3
    """Clip of the target-policy smoothing noise."""
    aug_pad: Annotated[int, at.Interval(ge=0, lt=16)] = 4
    """Random-shift padding in pixels."""
    replay_size: PosInt = 250_000
    """Replay capacity in transitions."""
    eval_every: PosInt = 2500
    """Agent steps between evaluations (5000 frames)."""
    eval_episodes: PosInt = 10
    """Episodes per evaluation (deterministic policy, fixed reset seeds shared by all agents)."""
    pred_eval_episodes: NonNegInt = 4
    """Held-out babbling episodes for the EF prediction error (claim 2)."""
    checkpoint_every: PosInt = 10_000
    """Agent steps between checkpoints (written at the next episode end)."""
    save_replay: bool = True
    """Put the replay buffer in checkpoints (needed for an exact resume)."""
    crash_at_step: int = -1
    """Test hook: raise after this global step (before it is checkpointed); -1 never."""

    def __post_init__(self) -> None:
        validate(self)
        check_env_id("env", self.env)
        if self.agent_dim >= self.repr_dim:
            raise ConfigError("agent_dim", self.agent_dim, f"an integer in [1, repr_dim) = [1, {self.repr_dim})")
        episode = self.episode_steps
        need = max(self.window - 1, self.frame_stack + self.nstep - 1) if self.trains_ef else self.nstep
        if episode < need:
            raise ConfigError(
                "horizon",
                self.horizon,
                f"a window that fits an episode: {self.env} episodes have {episode} agent steps "
                f"(max_episode_steps / action_repeat), the window needs {need}",
            )

    @property
    def agents(self) -> tuple[str, ...]:
        """Agents to train, baseline first."""
        return AGENTS if self.agent == "both" else (self.agent,)

    @property
    def trains_ef(self) -> bool:
        """Whether an Ego-Foresight agent is trained."""
        return "drqv2-ef" in self.agents

    @property
    def window(self) -> int:
        """Replay window of the EF agent: t_c + H frames."""
        return self.frame_stack + self.horizon

    @property
    def episode_steps(self) -> int:
        """Agent steps per episode (time limit / action repeat, rounded up)."""
        sim = self.max_episode_steps or DEFAULT_EPISODE_STEPS[self.env]
        return -(-sim // self.action_repeat)

    @property
    def jobs(self) -> list[tuple[str, int]]:
        """``(agent, seed)`` training runs in order."""
        return [(a, s) for a in self.agents for s in self.train_seeds]


#: smoke: seconds (tests); quick: the EF prediction claims only (the EF agent alone, 1500 motor-babbling
#: steps, reduced networks: minutes on 2 CPU cores, see README); full: the paper's settings and the return
#: claims (a GPU job: 2.5M frames x 2 agents x 5 seeds).
PRESETS: dict[str, EgoForesightConfig] = {
    "smoke": EgoForesightConfig(
        train_seeds=(1,),
        image_size=64,
        steps=80,
        seed_steps=30,
        expl_steps=30,
        babbling_steps=30,
        batch_size=8,
        feature_dim=16,
        hidden_dim=32,
        repr_dim=128,
        conv_channels=8,
        agent_dim=8,
        horizon=3,
        rollout_hidden=(32,),
        decoder_channels=8,
        eval_every=40,
        eval_episodes=1,
        pred_eval_episodes=1,
        checkpoint_every=25,
        replay_size=1000,
    ),
    "quick": EgoForesightConfig(
        agent="drqv2-ef",
        train_seeds=(1,),
        image_size=64,
        steps=1500,
        seed_steps=250,
        expl_steps=250,
        babbling_steps=1500,
        batch_size=32,
        conv_channels=16,
        hidden_dim=256,
        repr_dim=512,
        agent_dim=32,
        horizon=10,
        rollout_hidden=(256, 256),
        decoder_channels=32,
        std_steps=1500,
        eval_every=500,
        eval_episodes=2,
        pred_eval_episodes=4,
        checkpoint_every=500,
        replay_size=10_000,
    ),
    "full": EgoForesightConfig(),
}
