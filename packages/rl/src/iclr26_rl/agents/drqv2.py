"""DrQ-v2 (Yarats et al., 2021) as one readable agent, with an optional auxiliary-loss hook.

Read top to bottom: hyper-parameters → encoder → actor → critic → agent (act, update).

Networks (shapes for F stacked frames of size S, action dim A)::

    encoder  E : uint8 [B, 3F, S, S] → x/255 − 0.5 → conv3x3 s2 → 3 × conv3x3 s1 (32 ch, ReLU) → then
                 plain: flatten → h ∈ R^{32·35·35} (84 px)                   (DrQ-v2's reference Encoder)
                 pool:  AvgPool(4) → flatten → Linear → h ∈ R^{repr_dim}     (Ego-Foresight's PoolEncoder)
    actor    π : h → Linear(feature_dim) + LayerNorm + tanh → MLP(hidden, hidden) → tanh → μ ∈ [-1,1]^A
    critic   Q1, Q2 : h → same trunk → [z ; a] → MLP(hidden, hidden) → scalar

Update (one gradient step on a replay batch, Eq. numbers from DrQ-v2 §3)::

    o, o' ← random_shift(o), random_shift(o')                      (pad 4)
    h = E(o);  h' = E(o') (no grad);  h_w = E(random_shift(window context)) (auxiliary loss only)
    a' = μ(h') + clip(ε σ(t), ±c),  y = r^{(n)} + γ^n d · min(Q̄1, Q̄2)(h', a')   (clipped double Q, n-step)
    L_critic = (Q1(h, a) − y)² + (Q2(h, a) − y)²
    L = L_critic + β · L_aux(h_w, batch)                          (Ego-Foresight's hook; none for DrQ-v2)

The critic's transitions come from every step of the replay (as DrQ-v2's); the auxiliary loss gets its
own batch of full context+horizon windows (:meth:`EpisodeReplay.sample`).
    encoder, critic and the auxiliary module step on ∇L;
    actor: L_π = −min(Q1, Q2)(sg(h), μ(sg(h)) + clip(ε σ(t), ±c));  Q̄ ← τ Q + (1 − τ) Q̄

Exploration: uniform actions for ``expl_steps``, then ``μ + ε σ(t)`` with σ(t) linear from
``std_init`` to ``std_final`` over ``std_steps`` agent steps; Ego-Foresight's *motor babbling* replaces
this for the first ``babbling_steps``: ``a = clip(U[−b, b], −1, 1)`` (b = 4: mostly bang-bang).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

import numpy as np
import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from iclr26_rl.data.replay import Batch
from iclr26_rl.nn.layers import (
    drqv2_weight_init,
    linear_schedule,
    random_shift,
    truncated_normal_sample,
)

__all__ = [
    "ENCODERS",
    "Actor",
    "AuxiliaryLoss",
    "Critic",
    "DrQV2Agent",
    "DrQV2Hparams",
    "DrQV2Policy",
    "EncoderKind",
    "PixelEncoder",
]

EncoderKind = Literal["plain", "pool"]
#: Encoder heads: DrQ-v2's reference (flattened conv features) and Ego-Foresight's pooled projection.
ENCODERS: tuple[EncoderKind, ...] = ("plain", "pool")


@dataclass(frozen=True)
class DrQV2Hparams:
    """DrQ-v2's published defaults (as used by Ego-Foresight's repository)."""

    lr: float = 1e-4
    encoder: EncoderKind = "plain"
    feature_dim: int = 50
    hidden_dim: int = 1024
    repr_dim: int = 2048
    conv_channels: int = 32
    critic_tau: float = 0.01
    std_init: float = 1.0
    std_final: float = 0.1
    std_steps: int = 500_000
    std_clip: float = 0.3
    expl_steps: int = 2000
    babbling_steps: int = 0
    babbling_scale: float = 4.0
    aug_pad: int = 4
    aux_weight: float = 1.0


class PixelEncoder(nn.Module):
    """DrQ-v2's conv stack with one of two heads (``kind``).

    * ``"plain"``: DrQ-v2's reference ``Encoder``: the conv features flattened, ``repr_dim`` =
      channels × 35 × 35 at 84 px (× 25 × 25 at 64 px); the ``repr_dim`` argument is ignored.
    * ``"pool"``: Ego-Foresight's ``PoolEncoder``: AvgPool(4) + Linear to ``repr_dim`` (the n of the
      agent/scene split).

    Input ``float [B, 3F, S, S]`` with values in [0, 255]; output ``h`` ``[B, self.repr_dim]``.
    """

    def __init__(
        self, in_channels: int, image_size: int, repr_dim: int = 2048, channels: int = 32, kind: EncoderKind = "pool"
    ) -> None:
        super().__init__()
        if kind not in ENCODERS:
            raise ValueError(f"encoder kind must be one of {ENCODERS}, got {kind!r}")
        layers: list[nn.Module] = [nn.Conv2d(in_channels, channels, 3, stride=2), nn.ReLU()]
        for _ in range(3):
            layers += [nn.Conv2d(channels, channels, 3, stride=1), nn.ReLU()]
        if kind == "pool":
            layers.append(nn.AvgPool2d(4, stride=4))
        self.convnet = nn.Sequential(*layers)
        with torch.no_grad():
            flat = self.convnet(torch.zeros(1, in_channels, image_size, image_size)).numel()
        self.kind = kind
        self.projection = nn.Linear(flat, repr_dim) if kind == "pool" else nn.Identity()
        self.repr_dim = repr_dim if kind == "pool" else flat
        self.apply(drqv2_weight_init)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        h = self.convnet(obs / 255.0 - 0.5)
        return self.projection(h.flatten(1))


def _trunk(repr_dim: int, feature_dim: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(repr_dim, feature_dim), nn.LayerNorm(feature_dim), nn.Tanh())


class Actor(nn.Module):
    """Deterministic mean ``μ(h) ∈ [-1, 1]^A``; exploration noise is added by the caller."""

    def __init__(self, repr_dim: int, action_dim: int, feature_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.trunk = _trunk(repr_dim, feature_dim)
        self.policy = nn.Sequential(
            nn.Linear(feature_dim, hidden_dim),
            nn.ReLU(),
            nn.Linear(hidden_dim, hidden_dim),
            nn.ReLU(),
            nn.Linear(hidden_dim, action_dim),
        )
        self.apply(drqv2_weight_init)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.policy(self.trunk(h)))


class Critic(nn.Module):
    """Twin Q heads on a shared trunk: ``(Q1, Q2)``, each ``[B, 1]``."""

    def __init__(self, repr_dim: int, action_dim: int, feature_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.trunk = _trunk(repr_dim, feature_dim)

        def head() -> nn.Sequential:
            return nn.Sequential(
                nn.Linear(feature_dim + action_dim, hidden_dim),
                nn.ReLU(),
                nn.Linear(hidden_dim, hidden_dim),
                nn.ReLU(),
                nn.Linear(hidden_dim, 1),
            )

        self.q1, self.q2 = head(), head()
        self.apply(drqv2_weight_init)

    def forward(self, h: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = torch.cat([self.trunk(h), action], dim=-1)
        return self.q1(z), self.q2(z)


class AuxiliaryLoss(Protocol):
    """An extra encoder loss added to the critic loss (Ego-Foresight's ``L_ef``)."""

    #: Frames per replay window the loss needs (F + H), 0 for plain transitions.
    window: int

    def parameters(self) -> Any:  # nn.Module.parameters
        """Trainable parameters (stepped with the encoder and critic)."""
        ...

    def loss(self, h: torch.Tensor, batch: Batch, shifts: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
        """``(scalar loss, metrics)`` from the encoding ``h`` of the randomly shifted window context
        (``batch.window_frames[:, :F]``, shifted by ``shifts``) and the batch."""
        ...


class DrQV2Agent:
    """DrQ-v2 with an optional auxiliary loss module (``aux``); see the module docstring.

    Args:
        obs_shape: ``(3F, S, S)``.
        action_dim: A.
        hp: Hyper-parameters.
        device: Torch device.
        aux: Optional :class:`AuxiliaryLoss` (an ``nn.Module``); weighted by ``hp.aux_weight`` (β).
    """

    def __init__(
        self,
        obs_shape: tuple[int, int, int],
        action_dim: int,
        hp: DrQV2Hparams | None = None,
        device: torch.device | str = "cpu",
        aux: nn.Module | None = None,
    ) -> None:
        hp = hp if hp is not None else DrQV2Hparams()
        self.hp = hp
        self.device = torch.device(device)
        self.action_dim = int(action_dim)
        self.obs_shape = tuple(obs_shape)
        c, s, _ = obs_shape
        self.encoder = PixelEncoder(c, s, hp.repr_dim, hp.conv_channels, hp.encoder).to(self.device)
        repr_dim = self.encoder.repr_dim
        self.actor = Actor(repr_dim, action_dim, hp.feature_dim, hp.hidden_dim).to(self.device)
        self.critic = Critic(repr_dim, action_dim, hp.feature_dim, hp.hidden_dim).to(self.device)
        self.critic_target = Critic(repr_dim, action_dim, hp.feature_dim, hp.hidden_dim).to(self.device)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.aux = aux.to(self.device) if aux is not None else None
        # Adam is per-parameter, so one optimizer over encoder+critic(+aux) equals the reference's
        # separate encoder/critic/decoder optimizers with the same lr.
        model_params = [*self.encoder.parameters(), *self.critic.parameters()]
        if self.aux is not None:
            model_params += list(self.aux.parameters())
        self.model_opt = torch.optim.Adam(model_params, lr=hp.lr)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=hp.lr)
        self.train(True)

    # ------------------------------------------------------------------------------------------------

    @property
    def window(self) -> int:
        """Frames per replay window (0 without an auxiliary loss that needs windows)."""
        return int(getattr(self.aux, "window", 0)) if self.aux is not None else 0

    def train(self, training: bool = True) -> None:
        """Train/eval mode of every module (BatchNorm in the EF decoder cares)."""
        for m in (self.encoder, self.actor, self.critic, *(() if self.aux is None else (self.aux,))):
            m.train(training)
        self.critic_target.train(training)

    def std(self, step: int) -> float:
        """Exploration std σ(step)."""
        return linear_schedule(self.hp.std_init, self.hp.std_final, self.hp.std_steps, step)

    @torch.no_grad()
    def act(self, obs: np.ndarray, step: int, eval_mode: bool) -> np.ndarray:
        """Action in ``[-1, 1]^A`` for one observation ``uint8 [3F, S, S]``."""
        if not eval_mode and step < self.hp.babbling_steps:
            u = (torch.rand(self.action_dim) * 2 - 1) * self.hp.babbling_scale
            return u.clamp(-1.0, 1.0).numpy().astype(np.float32)
        was_training = self.encoder.training
        self.train(False)
        x = torch.as_tensor(obs, device=self.device, dtype=torch.float32)[None]
        mu = self.actor(self.encoder(x))
        self.train(was_training)
        if eval_mode:
            action = mu
        elif step < self.hp.expl_steps:
            action = torch.rand_like(mu) * 2 - 1
        else:
            action = truncated_normal_sample(mu, self.std(step), clip=None)
        return action[0].cpu().numpy().astype(np.float32)

    # ------------------------------------------------------------------------------------------------

    def _to(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, device=self.device)

    def update(self, batch: Batch, step: int) -> dict[str, float]:
        """One DrQ-v2 (+ auxiliary) gradient step; returns scalar metrics."""
        hp = self.hp
        obs, _ = random_shift(self._to(batch.obs).float(), hp.aug_pad)
        next_obs, _ = random_shift(self._to(batch.next_obs).float(), hp.aug_pad)
        action, reward, discount = self._to(batch.action), self._to(batch.reward), self._to(batch.discount)
        std = self.std(step)

        h = self.encoder(obs)
        with torch.no_grad():
            h_next = self.encoder(next_obs)
            next_action = truncated_normal_sample(self.actor(h_next), std, hp.std_clip)
            tq1, tq2 = self.critic_target(h_next, next_action)
            target_q = reward + discount * torch.min(tq1, tq2)
        q1, q2 = self.critic(h, action)
        critic_loss = F.mse_loss(q1, target_q) + F.mse_loss(q2, target_q)
        loss = critic_loss
        metrics = {
            "critic_loss": critic_loss.item(),
            "q": q1.detach().mean().item(),
            "batch_reward": reward.mean().item(),
        }
        if self.aux is not None:
            if batch.window_frames is None:
                raise ValueError("an auxiliary loss needs replay windows (sample with window = F + H)")
            b, f = batch.window_frames.shape[0], self.obs_shape[0] // 3
            context = self._to(batch.window_frames[:, :f]).reshape(b, *self.obs_shape).float()
            context, shifts = random_shift(context, hp.aug_pad)
            aux = cast(AuxiliaryLoss, self.aux)
            aux_loss, aux_metrics = aux.loss(self.encoder(context), batch, shifts)
            loss = loss + hp.aux_weight * aux_loss
            metrics.update(aux_metrics)
        self.model_opt.zero_grad(set_to_none=True)
        loss.backward()
        self.model_opt.step()

        hd = h.detach()
        pi = truncated_normal_sample(self.actor(hd), std, hp.std_clip)
        aq1, aq2 = self.critic(hd, pi)
        actor_loss = -torch.min(aq1, aq2).mean()
        self.actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        self.actor_opt.step()
        metrics["actor_loss"] = actor_loss.item()

        with torch.no_grad():
            for p, tp in zip(self.critic.parameters(), self.critic_target.parameters(), strict=True):
                tp.lerp_(p, hp.critic_tau)
        return metrics

    # ------------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Every network and optimizer state (tensors only)."""
        state = {
            "encoder": self.encoder.state_dict(),
            "actor": self.actor.state_dict(),
            "critic": self.critic.state_dict(),
            "critic_target": self.critic_target.state_dict(),
            "model_opt": self.model_opt.state_dict(),
            "actor_opt": self.actor_opt.state_dict(),
        }
        if self.aux is not None:
            state["aux"] = self.aux.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Inverse of :meth:`state_dict`."""
        self.encoder.load_state_dict(state["encoder"])
        self.actor.load_state_dict(state["actor"])
        self.critic.load_state_dict(state["critic"])
        self.critic_target.load_state_dict(state["critic_target"])
        if self.aux is not None:
            self.aux.load_state_dict(state["aux"])
        self.model_opt.load_state_dict(state["model_opt"])
        self.actor_opt.load_state_dict(state["actor_opt"])


class DrQV2Policy(nn.Module, PyTorchModelHubMixin):
    """The trained networks of a :class:`DrQV2Agent` (encoder, actor, critic and the EF head if any), as
    one module with ``save_pretrained``/``from_pretrained`` (:class:`huggingface_hub.PyTorchModelHubMixin`:
    safetensors + ``config.json`` of the arguments below). ``forward(obs)`` is the deterministic policy.

    Args:
        obs_shape: ``[3F, S, S]``.
        action_dim: A.
        hparams: :class:`DrQV2Hparams` as a dict.
        aux: The :class:`~iclr26_rl.methods.ego_foresight.model.EgoForesightHead` arguments, or None.
    """

    def __init__(
        self, obs_shape: list[int], action_dim: int, hparams: dict[str, Any], aux: dict[str, Any] | None = None
    ) -> None:
        super().__init__()
        hp = DrQV2Hparams(**hparams)
        c, s, _ = obs_shape
        self.obs_shape, self.action_dim = tuple(int(x) for x in obs_shape), int(action_dim)
        self.encoder = PixelEncoder(c, s, hp.repr_dim, hp.conv_channels, hp.encoder)
        repr_dim = self.encoder.repr_dim
        self.actor = Actor(repr_dim, action_dim, hp.feature_dim, hp.hidden_dim)
        self.critic = Critic(repr_dim, action_dim, hp.feature_dim, hp.hidden_dim)
        self.aux: nn.Module | None = None
        if aux is not None:
            from iclr26_rl.methods.ego_foresight.model import EgoForesightHead

            self.aux = EgoForesightHead(**aux)

    @torch.no_grad()
    def forward(self, obs: torch.Tensor | np.ndarray) -> torch.Tensor:
        """Deterministic actions ``μ(E(obs))`` in ``[-1, 1]``, computed without autograd (an acting policy).

        ``obs``: ``uint8 or float [B, 3F, S, S]`` (CHW, as :func:`~iclr26_rl.envs.pixels.make_pixel_env` gives)
        or ``[B, S, S, 3F]`` (HWC, as gymnasium renders), torch or NumPy; one stack without ``B`` gives ``[A]``.
        Returns ``[B, A]``. Frames of another size or stack than ``obs_shape`` are a one-line
        :class:`~iclr26_rl.errors.RLInputError`.
        """
        actions = self.actor(self.encoder(self._as_batch(obs)))
        return actions[0] if getattr(obs, "ndim", 0) == 3 else actions

    def _as_batch(self, obs: torch.Tensor | np.ndarray) -> torch.Tensor:
        """``obs`` as float ``[B, 3F, S, S]`` on the policy's device, or a one-line error naming the shape."""
        from iclr26_rl.errors import RLInputError

        c, h, w = self.obs_shape
        x = torch.as_tensor(obs)
        shape = tuple(x.shape)
        if x.ndim == 3:
            x = x[None]
        chw, hwc = (c, h, w), (h, w, c)
        if x.ndim == 4 and tuple(x.shape[1:]) == hwc and hwc != chw:
            x = x.permute(0, 3, 1, 2).contiguous()  # the CHW memory layout, so results match CHW input bit for bit
        if x.ndim != 4 or tuple(x.shape[1:]) != chw:
            raise RLInputError(
                f"obs: this policy takes stacks of {c // 3} RGB {h}x{w} frames, [B, {c}, {h}, {w}] (CHW) or "
                f"[B, {h}, {w}, {c}] (HWC), got shape {shape}; render or resize the frames to {h}x{w}"
            )
        device = next(self.parameters()).device
        return x.to(device=device, dtype=torch.float32)

    @classmethod
    def from_agent(cls, agent: DrQV2Agent) -> DrQV2Policy:
        """A CPU copy of ``agent``'s trained networks."""
        aux_cfg = getattr(agent.aux, "_hub_mixin_config", None) if agent.aux is not None else None
        if agent.aux is not None and aux_cfg is None:
            raise TypeError(f"{type(agent.aux).__name__} has no saved config: only EgoForesightHead heads are saved")
        policy = cls(list(agent.obs_shape), agent.action_dim, dataclasses.asdict(agent.hp), aux_cfg)
        policy.encoder.load_state_dict(agent.encoder.state_dict())
        policy.actor.load_state_dict(agent.actor.state_dict())
        policy.critic.load_state_dict(agent.critic.state_dict())
        if policy.aux is not None and agent.aux is not None:
            policy.aux.load_state_dict(agent.aux.state_dict())
        return policy.eval()
