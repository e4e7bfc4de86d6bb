"""Ego-Foresight head: agent/scene split, action-conditioned rollout of the agent part, frame decoder.

Notation (paper §3, Eq. 1-3). The encoder maps the context of ``t_c`` stacked frames to
``h ∈ R^n`` (n = ``repr_dim`` = 2048), split into

    h_a = h[:l]   (agent part, the bottleneck, l = ``agent_dim`` = 32)      h_s = h[l:]   (scene part)

The recurrent block ``FC_ψ`` (TD-MPC2 normed MLP, hidden [512, 512]) rolls the agent part forward with
the actions the agent is given, one step per action::

    ĥ_a^{t_c} = h_a,      ĥ_a^{t_{j+1}} = FC_ψ([ĥ_a^{t_j} ; a_{t_{j+1}}])

and the decoder ``D_ψ`` (DCGAN, no skips) reconstructs a future frame from the predicted agent part and
the *current* scene part: ``x̂_{t_k} = D_ψ([ĥ_a^{t_k} ; h_s^{t_c}])``. The loss, with k uniform over the
H future frames of the window (one k per batch, as in the reference code), is

    L_ef = E_batch[ Σ_pixels ( clamp(x̂_{t_k}, 0, 1) − x_{t_k} / 255 )² ]      (sum over pixels, mean over batch)

and DrQ-v2 trains ``L = L_critic + β L_ef`` (β = 1) with gradients of both reaching the encoder. Because
the scene part never sees the actions, everything that moves with them must pass through the l-dim
agent part: the bottleneck that makes the representation agent-aware.

Window layout (see :mod:`iclr26_rl.data.replay`): ``window_frames [B, F+H, 3, S, S]``; frames ``0..F-1``
are the context (the stacked observation), frame ``F+i`` is ``i+1`` steps ahead and is reached by the
actions ``window_actions[:, F : F+i+1]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from iclr26_rl.data.replay import Batch
from iclr26_rl.nn.layers import normed_mlp, random_shift

__all__ = ["EgoForesightHead", "FrameDecoder", "channels_first", "decoder_kernels"]


def decoder_kernels(image_size: int) -> tuple[int, ...]:
    """Transposed-conv kernels for an ``S × S`` frame, ``S >= 16``: a stride-1 layer ``1 → S // 16`` then four
    stride-2, pad-1 layers (``s → 2s + k − 4``, ``k = 4 + bit``), e.g. ``1→5→10→21→42→84`` (84×84:
    ``(5, 4, 5, 4, 4)``, the paper's) and ``1→4→8→16→32→64`` (64×64: ``(4, 4, 4, 4, 4)``)."""
    if isinstance(image_size, bool) or not isinstance(image_size, int) or image_size < 16:
        raise ValueError(f"image_size: the Ego-Foresight decoder needs frames of side >= 16, got {image_size!r}")
    kernels, side = [], image_size
    for _ in range(4):
        kernels.append(4 + side % 2)
        side //= 2
    return (side, *reversed(kernels))


def channels_first(frames: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
    """``[..., S, S, 3]`` RGB frames (HWC, gymnasium's ``render()``) as ``[..., 3, S, S]``; CHW frames unchanged."""
    shape = tuple(frames.shape)
    if len(shape) >= 3 and shape[-1] == 3 and shape[-3] != 3:
        if isinstance(frames, np.ndarray):
            return np.moveaxis(frames, -1, -3)
        return frames.movedim(-1, -3)
    return frames


def _dcgan_init(m: nn.Module) -> None:
    if isinstance(m, nn.ConvTranspose2d):
        m.weight.data.normal_(0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0.0)


class FrameDecoder(nn.Module):
    """DCGAN decoder without skips: ``[B, in_dim] → (0, 1)^{[B, 3, S, S]}``.

    ``in_dim`` as a 1×1 map → ConvT(k, s1) → 4 × ConvT(k, s2, p1); BatchNorm + LeakyReLU(0.2) between,
    sigmoid at the end (64 channels in the paper).
    """

    def __init__(self, in_dim: int, image_size: int = 84, channels: int = 64) -> None:
        super().__init__()
        k = decoder_kernels(image_size)
        layers: list[nn.Module] = [
            nn.ConvTranspose2d(in_dim, channels, k[0], stride=1, padding=0, bias=False),
            nn.BatchNorm2d(channels),
            nn.LeakyReLU(0.2),
        ]
        for kernel in k[1:-1]:
            layers += [
                nn.ConvTranspose2d(channels, channels, kernel, stride=2, padding=1, bias=False),
                nn.BatchNorm2d(channels),
                nn.LeakyReLU(0.2),
            ]
        layers += [nn.ConvTranspose2d(channels, 3, k[-1], stride=2, padding=1, bias=False), nn.Sigmoid()]
        self.net = nn.Sequential(*layers)
        self.image_size = image_size
        self.apply(_dcgan_init)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z[:, :, None, None])


class EgoForesightHead(nn.Module, PyTorchModelHubMixin):
    """The EF auxiliary module (an :class:`~iclr26_rl.agents.drqv2.AuxiliaryLoss`), usable on any encoder.

    Inside DrQ-v2 it is the agent's ``aux`` hook (:meth:`loss` on a replay :class:`Batch`); on a user's
    own encoder and replay, :meth:`window_loss` takes the encoder's output and plain window tensors.
    ``save_pretrained``/``from_pretrained`` come from :class:`huggingface_hub.PyTorchModelHubMixin`.

    Args:
        repr_dim: n, size of the encoder output h.
        agent_dim: l, size of the agent part (``1 <= l < n``).
        action_dim: A.
        frame_stack: t_c, context frames.
        horizon: H, future frames per window (``>= 1``).
        image_size: S (64 or 84 in the paper; any side >= 16, as the encoder and the renderer allow).
        rollout_hidden: Hidden sizes of FC_ψ.
        decoder_channels: Channels of the decoder.
        aug_pad: Pad of the random shift (the target frame is shifted like the context).
    """

    def __init__(
        self,
        repr_dim: int,
        agent_dim: int,
        action_dim: int,
        frame_stack: int,
        horizon: int,
        image_size: int,
        rollout_hidden: Sequence[int] = (512, 512),
        decoder_channels: int = 64,
        aug_pad: int = 4,
    ) -> None:
        super().__init__()
        if not 1 <= agent_dim < repr_dim:
            raise ValueError(f"agent_dim must be in [1, repr_dim) = [1, {repr_dim}), got {agent_dim}")
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        self.repr_dim, self.agent_dim, self.action_dim = repr_dim, agent_dim, action_dim
        self.frame_stack, self.horizon = frame_stack, horizon
        self.window = frame_stack + horizon
        self.aug_pad = aug_pad
        decoder_kernels(image_size)  # one-line error for frame sizes the decoder cannot produce
        self.rollout_net = normed_mlp(agent_dim + action_dim, rollout_hidden, agent_dim)
        self.decoder = FrameDecoder(repr_dim, image_size, decoder_channels)

    def split(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``h [B, n] → (h_a [B, l], h_s [B, n−l])``."""
        return h[:, : self.agent_dim], h[:, self.agent_dim :]

    def rollout(self, h_agent: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Predicted agent parts after each action: ``h_a [B, l], actions [B, K, A] → [B, K, l]``."""
        out = []
        for i in range(actions.shape[1]):
            h_agent = self.rollout_net(torch.cat([h_agent, actions[:, i]], dim=-1))
            out.append(h_agent)
        return torch.stack(out, dim=1)

    def decode(self, h_agent: torch.Tensor, h_scene: torch.Tensor) -> torch.Tensor:
        """``x̂ = clamp(D([ĥ_a ; h_s]), 0, 1)``: ``[B, l], [B, n−l] → [B, 3, S, S]``."""
        return self.decoder(torch.cat([h_agent, h_scene], dim=-1)).clamp(0.0, 1.0)

    def predict(self, h: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """All future frames: ``h [B, n], actions [B, K, A] → [B, K, 3, S, S]`` (step i uses actions[:, :i+1])."""
        h_agent, h_scene = self.split(h)
        agents = self.rollout(h_agent, actions)
        b, k = agents.shape[:2]
        scene = h_scene[:, None].expand(b, k, h_scene.shape[-1])
        frames = self.decode(agents.reshape(b * k, -1), scene.reshape(b * k, -1))
        return frames.reshape(b, k, *frames.shape[1:])

    def loss(self, h: torch.Tensor, batch: Batch, shifts: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
        """``L_ef`` for one replay :class:`Batch` (the agent's hook); see :meth:`window_loss`."""
        if batch.window_frames is None or batch.window_actions is None:
            raise ValueError("Ego-Foresight needs replay windows (sample with window = frame_stack + horizon)")
        return self.window_loss(h, batch.window_frames, batch.window_actions, shifts)

    def window_loss(
        self,
        h: torch.Tensor,
        window_frames: torch.Tensor | np.ndarray,
        window_actions: torch.Tensor | np.ndarray,
        shifts: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """``L_ef`` on windows from any encoder and any replay (no agent needed).

        Args:
            h: ``[B, n]`` the encoder's output on the context frames ``window_frames[:, :F]`` (with
                gradients, so ``L_ef`` trains the encoder too).
            window_frames: ``[B, T, 3, S, S]`` frames in ``0..255`` (uint8 or float), ``T >= F + H``:
                ``F`` context frames, then the future ones; ``S`` is the head's ``image_size``. HWC frames
                ``[B, T, S, S, 3]``, as gymnasium renders them, are taken too.
            window_actions: ``[B, T, A]``; ``window_actions[:, F + i]`` leads to frame ``F + i``.
            shifts: ``int64 [B, 2]`` random-shift offsets the context got (the target is shifted the
                same way, :func:`~iclr26_rl.nn.layers.random_shift`); None: no augmentation.

        One ``k`` uniform in ``1..H`` per call (the reference code's). Returns ``(loss, metrics)``.
        """
        window_frames = channels_first(window_frames)
        self._check_windows(h, window_frames, window_actions)
        f = self.frame_stack
        j = int(torch.randint(f, f + self.horizon, ()).item())
        actions = torch.as_tensor(window_actions[:, f : j + 1], device=h.device).float()
        target = torch.as_tensor(window_frames[:, j], device=h.device).float()
        if shifts is not None:
            target, _ = random_shift(target, self.aug_pad, shifts)
        h_agent, h_scene = self.split(h)
        pred = self.decode(self.rollout(h_agent, actions)[:, -1], h_scene)
        loss = ((pred - target / 255.0) ** 2).flatten(1).sum(dim=1).mean()
        return loss, {"ef_loss": loss.item(), "ef_k": float(j - f + 1)}

    def _check_windows(
        self, h: torch.Tensor, frames: torch.Tensor | np.ndarray, actions: torch.Tensor | np.ndarray
    ) -> None:
        """One-line errors for windows the head cannot use."""
        size = self.decoder.image_size
        if h.ndim != 2 or h.shape[1] != self.repr_dim:
            raise ValueError(f"h: expected [B, repr_dim={self.repr_dim}] encoder features, got {tuple(h.shape)}")
        shape = tuple(frames.shape)
        if len(shape) != 5 or shape[2] != 3 or shape[0] != h.shape[0]:
            raise ValueError(f"window_frames: expected [B={h.shape[0]}, T, 3, S, S] RGB frames, got {shape}")
        if shape[3:] != (size, size):
            raise ValueError(
                f"window_frames: {shape[3]}x{shape[4]} frames, this head decodes {size}x{size} "
                f"(build it with image_size={shape[3]} for square frames, or resize the frames to {size}x{size})"
            )
        if shape[1] < self.window:
            raise ValueError(f"window_frames: {shape[1]} frames per window, need frame_stack + horizon = {self.window}")
        if tuple(actions.shape[:2]) != shape[:2] or actions.shape[-1] != self.action_dim:
            raise ValueError(
                f"window_actions: expected [B, T, A] = [{shape[0]}, {shape[1]}, {self.action_dim}], "
                f"got {tuple(actions.shape)}"
            )
