"""Config and presets of ``ego-foresight`` (no heavy imports: read by ``iclr26 list``).

Defaults are the paper's (research notes §5.1–5.2, the reference repository's Hydra configs): DrQ-v2
with lr 1e-4, batch 256, feature 50, hidden 1024, τ 0.01, update every 2 steps, 3-step returns,
γ 0.99, σ linear 1.0→0.1 over 500k steps, clip 0.3, 250k replay, 4000 seed frames, 2000 uniform
steps; EF with n = 2048, l = 32, H = 10, β = 1, FC_ψ hidden [512, 512], 64-channel decoder and
12 500 motor-babbling steps; 3 stacked 84×84 frames, action repeat 2, 2.5M frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from iclr26_rl.envs.registry import DEFAULT_EPISODE_STEPS, check_env_id
from iclr26_shared.config import check_choice, check_positive, check_range
from iclr26_shared.errors import ConfigError

__all__ = ["AGENTS", "PRESETS", "AgentChoice", "EgoForesightConfig"]

AgentChoice = Literal["both", "drqv2", "drqv2-ef"]
#: Agent names trained by ``agent="both"``, baseline first.
AGENTS: tuple[str, ...] = ("drqv2", "drqv2-ef")


@dataclass(frozen=True)
class EgoForesightConfig:
    """DrQ-v2 with and without Ego-Foresight on a gymnasium MuJoCo v5 task from pixels."""

    env: str = "Reacher-v5"
    """gymnasium MuJoCo v5 task (Reacher-v5, Pusher-v5, HalfCheetah-v5, ...)."""
    agent: AgentChoice = "both"
    """Which agents to train: drqv2 (baseline), drqv2-ef (with Ego-Foresight) or both (for the claims)."""
    seeds: tuple[int, ...] = (1, 2, 3, 4, 5)
    """Training seeds per agent (each offset by 1000 x --seed)."""
    image_size: int = 84
    """Frame side in pixels (64 or 84)."""
    frame_stack: int = 3
    """Stacked frames per observation (the EF context t_c)."""
    action_repeat: int = 2
    """Simulator steps per agent step (frames = steps x action_repeat)."""
    camera: Literal["task", "gym"] = "task"
    """task: our per-task view (Reacher top-down); gym: gymnasium's default camera."""
    fast_render: bool = True
    """Render without shadows, reflections and skybox (~5x faster on CPU)."""
    max_episode_steps: int = 0
    """Simulator steps per episode; 0 keeps the task's default (Reacher 50, Pusher 100)."""
    steps: int = 1_250_000
    """Agent steps per training run (2.5M frames at action repeat 2)."""
    seed_steps: int = 2000
    """Agent steps collected before the first update (4000 seed frames)."""
    expl_steps: int = 2000
    """Agent steps with uniform random actions (DrQ-v2's num_expl_steps)."""
    babbling_steps: int = 12_500
    """EF motor-babbling steps: actions clip(U[-b, b], -1, 1)."""
    babbling_scale: float = 4.0
    """b of motor babbling (4: mostly bang-bang actions)."""
    babble_baseline: bool = False
    """Also give the DrQ-v2 baseline motor babbling (off in the paper's comparison)."""
    batch_size: int = 256
    """Replay batch size."""
    lr: float = 1e-4
    """Adam learning rate of every module."""
    feature_dim: int = 50
    """Actor/critic trunk width."""
    hidden_dim: int = 1024
    """Actor/critic MLP width."""
    repr_dim: int = 2048
    """Encoder output size n (EF: agent + scene parts)."""
    conv_channels: int = 32
    """Channels of the DrQ-v2 conv encoder."""
    agent_dim: int = 32
    """EF agent-part size l (the bottleneck), 1 <= l < repr_dim."""
    horizon: int = 10
    """EF prediction horizon H (future frames per window)."""
    beta: float = 1.0
    """Weight of the EF loss: L = L_critic + beta * L_ef."""
    rollout_hidden: tuple[int, ...] = (512, 512)
    """Hidden sizes of the EF recurrent block FC_psi."""
    decoder_channels: int = 64
    """Channels of the EF frame decoder."""
    critic_tau: float = 0.01
    """Soft target update rate."""
    update_every: int = 2
    """Agent steps per gradient update."""
    nstep: int = 3
    """n of the n-step return."""
    discount: float = 0.99
    """Discount gamma."""
    std_init: float = 1.0
    """Exploration std at step 0."""
    std_final: float = 0.1
    """Exploration std after std_steps."""
    std_steps: int = 500_000
    """Agent steps of the linear std schedule."""
    std_clip: float = 0.3
    """Clip of the target-policy smoothing noise."""
    aug_pad: int = 4
    """Random-shift padding in pixels."""
    replay_size: int = 250_000
    """Replay capacity in transitions."""
    eval_every: int = 2500
    """Agent steps between evaluations (5000 frames)."""
    eval_episodes: int = 10
    """Episodes per evaluation (deterministic policy, fixed reset seeds shared by all agents)."""
    pred_eval_episodes: int = 4
    """Held-out babbling episodes for the EF prediction error (claim 2)."""
    checkpoint_every: int = 10_000
    """Agent steps between checkpoints (written at the next episode end)."""
    save_replay: bool = True
    """Put the replay buffer in checkpoints (needed for an exact resume)."""
    crash_at_step: int = -1
    """Test hook: raise after this global step (before it is checkpointed); -1 never."""

    def __post_init__(self) -> None:
        check_env_id("env", self.env)
        check_choice("agent", self.agent, ("both", *AGENTS))
        if not self.seeds:
            raise ConfigError("seeds", self.seeds, "at least one seed")
        if any(s < 0 for s in self.seeds) or len(set(self.seeds)) != len(self.seeds):
            raise ConfigError("seeds", self.seeds, "distinct non-negative integers")
        check_choice("image_size", self.image_size, (64, 84))
        check_choice("camera", self.camera, ("task", "gym"))
        for name in (
            "frame_stack",
            "action_repeat",
            "steps",
            "batch_size",
            "feature_dim",
            "hidden_dim",
            "repr_dim",
            "conv_channels",
            "decoder_channels",
            "update_every",
            "nstep",
            "std_steps",
            "replay_size",
            "eval_every",
            "eval_episodes",
            "checkpoint_every",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(name, value, "an integer >= 1")
        for name in ("seed_steps", "expl_steps", "babbling_steps", "max_episode_steps", "pred_eval_episodes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(name, value, "an integer >= 0")
        if isinstance(self.horizon, bool) or not isinstance(self.horizon, int) or self.horizon < 1:
            raise ConfigError("horizon", self.horizon, "an integer >= 1")
        if not 1 <= self.agent_dim < self.repr_dim:
            raise ConfigError("agent_dim", self.agent_dim, f"an integer in [1, repr_dim) = [1, {self.repr_dim})")
        if not self.rollout_hidden or any(h < 1 for h in self.rollout_hidden):
            raise ConfigError("rollout_hidden", self.rollout_hidden, "one or more positive layer sizes")
        check_positive("lr", self.lr)
        check_positive("babbling_scale", self.babbling_scale)
        check_positive("beta", self.beta, allow_zero=True)
        check_range("critic_tau", self.critic_tau, 0.0, 1.0, low_open=True)
        check_range("discount", self.discount, 0.0, 1.0)
        check_positive("std_init", self.std_init, allow_zero=True)
        check_positive("std_final", self.std_final, allow_zero=True)
        check_positive("std_clip", self.std_clip)
        if isinstance(self.aug_pad, bool) or not isinstance(self.aug_pad, int) or not 0 <= self.aug_pad < 16:
            raise ConfigError("aug_pad", self.aug_pad, "an integer in [0, 16)")
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
        return [(a, s) for a in self.agents for s in self.seeds]


#: smoke: seconds (tests); quick: a few minutes on 2 CPU cores, reduced networks (see README);
#: full: the paper's settings (needs a GPU: 2.5M frames x 2 agents x 5 seeds).
PRESETS: dict[str, EgoForesightConfig] = {
    "smoke": EgoForesightConfig(
        seeds=(1,),
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
        seeds=(1, 2),
        image_size=64,
        steps=1500,
        seed_steps=250,
        expl_steps=250,
        babbling_steps=250,
        batch_size=32,
        conv_channels=16,
        hidden_dim=256,
        repr_dim=512,
        agent_dim=32,
        horizon=10,
        rollout_hidden=(256, 256),
        decoder_channels=32,
        std_steps=1500,
        eval_every=250,
        eval_episodes=5,
        pred_eval_episodes=4,
        checkpoint_every=500,
        replay_size=10_000,
    ),
    "full": EgoForesightConfig(),
}
