"""DUPA: dual-path condition alignment (Peng et al., ICLR 2026), the loss and its pieces.

For each clean image ``x`` (class ``y``) draw ``K`` independent pairs ``(t_k, ε_k)`` (both resampled by
default), form ``x_{t_k} = α_{t_k} x + σ_{t_k} ε_k`` and pass every path through the same (weight-shared)
DDT: ``z_{t_k} = Encoder(x_{t_k}, t_k, y)``, ``v_k = Decoder(x_{t_k}, t_k, z_{t_k})``. Then::

    L_velocity = (1/K) Σ_k ‖v_θ(x_{t_k}, t_k) − (α̇ x + σ̇ ε_k)‖²
    L_DUPA     = − 2/(K(K−1)) Σ_{i<j} (1/N) Σ_n cos( z_φ(z_{t_i}^[n]), z_φ(z_{t_j}^[n]) )
    L          = L_velocity + λ L_DUPA,      λ = 0.5

with ``z_φ`` a per-token MLP projector (``n`` indexes the ``N`` tokens). This is REPA's loss with the
external DINOv2 target swapped for the other path's projected condition. The paper writes ``Σ_k`` for the
velocity term; we average over the paths so that λ means the same for every K (a sum is the mean times K).
The cosine is symmetric (no stop-gradient in the paper); ``stop_grad=True`` is the SimSiam-style ablation
``½[cos(p_i, sg p_j) + cos(sg p_i, p_j)]``.

The projector must **not** be zero-initialised (the paper: the model collapses to a trivial solution):
Kaiming-normal on the first layer, Xavier-normal with a small gain on the later ones.

Collapse remedies (not in the paper; switches of the experiment): a **frozen** random projector (its
weights never train, so it cannot map everything to one direction by itself), and a SimSiam/BYOL-style
:class:`Predictor` on the online side with stop-gradient on the target side (``dupa_loss(predictor=q)``).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from iclr26_generative_vision.flow.matching import TimeSampling, add_noise, sample_times, velocity_target
from iclr26_shared.errors import DataError

__all__ = ["ConditionProjector", "PathBatch", "Predictor", "Resample", "draw_paths", "dupa_loss"]

#: Which of (t, ε) each path draws afresh: both (the paper), only t (ε shared) or only ε (t shared).
Resample = Literal["both", "time", "noise"]


class ConditionProjector(nn.Module):
    """``z_φ``: a 3-layer per-token MLP with SiLU, ``[..., H] → [..., D]`` (REPA / DDT's projector shape).

    Args:
        dim: Input width ``H`` (the aligned layer's width).
        hidden: Hidden width.
        out_dim: Output width ``D``.
        gain: Xavier gain of the second and third layers (small, never 0).
    """

    def __init__(self, dim: int, hidden: int, out_dim: int, *, gain: float = 0.1) -> None:
        super().__init__()
        if gain <= 0:
            raise ValueError(f"projector gain must be > 0 (a zero-initialised projector collapses), got {gain}")
        self.net = nn.Sequential(
            nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, out_dim)
        )
        first, *later = (m for m in self.net if isinstance(m, nn.Linear))
        nn.init.kaiming_normal_(first.weight, nonlinearity="relu")
        nn.init.zeros_(first.bias)
        for layer in later:
            nn.init.xavier_normal_(layer.weight, gain=gain)
            nn.init.zeros_(layer.bias)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """Project every token: ``[..., H] → [..., D]``."""
        return self.net(z)


class Predictor(nn.Module):
    """``q``: the SimSiam/BYOL-style predictor on the online side, a per-token 2-layer MLP ``[..., D] → [..., D]``
    (``Linear → SiLU → Linear``, PyTorch's default init) — a collapse remedy, not in the paper."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, dim))

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        """Predict every token: ``[..., D] → [..., D]``."""
        return self.net(p)


def dupa_loss(projected: torch.Tensor, *, stop_grad: bool = False, predictor: nn.Module | None = None) -> torch.Tensor:
    """``L_DUPA`` for ``projected`` ``[K, B, N, D]`` (K ≥ 2 paths of the same B images): minus the mean
    over path pairs i < j, images and tokens of ``cos(p_i, p_j)``; a scalar in [−1, 1] (−1: aligned).

    With a ``predictor`` q (collapse remedy, SimSiam's symmetric loss): each pair gives
    ``½[cos(q(p_i), sg p_j) + cos(q(p_j), sg p_i)]`` — the predictor runs on the online side only and the
    target side is stop-gradient, so a pair never pulls both of its projections towards each other.
    """
    if projected.dim() < 3:
        raise DataError(f"dupa_loss: projected must be [K, B, N, D] (K paths), got {tuple(projected.shape)}")
    k = projected.shape[0]
    if k < 2:
        raise ValueError(f"DUPA needs at least 2 paths, got {k}")
    p = F.normalize(projected, dim=-1)
    q = F.normalize(predictor(projected), dim=-1) if predictor is not None else None
    total = projected.new_zeros(())
    pairs = 0
    for i in range(k):
        for j in range(i + 1, k):
            if q is not None:
                cos = 0.5 * ((q[i] * p[j].detach()).sum(-1) + (q[j] * p[i].detach()).sum(-1))
            elif stop_grad:
                cos = 0.5 * ((p[i] * p[j].detach()).sum(-1) + (p[i].detach() * p[j]).sum(-1))
            else:
                cos = (p[i] * p[j]).sum(-1)
            total = total + cos.mean()
            pairs += 1
    return -total / pairs


class PathBatch(NamedTuple):
    """K noisy views of B images, flattened path-major to ``K·B`` rows."""

    x_t: torch.Tensor
    """``[K·B, C, S, S]`` noisy images (rows ``k·B … k·B + B − 1`` are path k)."""
    t: torch.Tensor
    """``[K·B]`` times."""
    target: torch.Tensor
    """``[K·B, C, S, S]`` velocity targets ``ε_k − x``."""
    labels: torch.Tensor
    """``[K·B]`` class labels (the same label, dropped or not, on every path of an image)."""


def draw_paths(
    x: torch.Tensor,
    labels: torch.Tensor,
    num_paths: int,
    generator: torch.Generator,
    *,
    resample: Resample = "both",
    time_sampling: TimeSampling = "lognormal",
) -> PathBatch:
    """Draw ``num_paths`` independent ``(t_k, ε_k)`` per image of ``x`` ``[B, C, S, S]`` (drawn on the CPU
    generator, moved to ``x``'s device); ``resample`` shares ε (``"time"``) or t (``"noise"``) across paths."""
    if not isinstance(x, torch.Tensor) or x.dim() < 2 or not x.is_floating_point():
        got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise DataError(f"draw_paths: x must be a float tensor of images [B, C, S, S], got {got}")
    b = x.shape[0]
    if labels.shape != (b,) or labels.is_floating_point():
        raise DataError(
            f"draw_paths: labels must be an integer tensor [B] = [{b}], got {tuple(labels.shape)} {labels.dtype}"
        )
    if labels.device != x.device:
        raise DataError(f"draw_paths: labels is on {labels.device} but x is on {x.device}")
    if num_paths < 1:
        raise DataError(f"draw_paths: num_paths must be >= 1, got {num_paths}")
    t = sample_times(b, time_sampling, generator)
    noise = torch.randn(x.shape, generator=generator)
    ts, noises = [t], [noise]
    for _ in range(1, num_paths):
        if resample in ("both", "time"):
            t = sample_times(b, time_sampling, generator)
        if resample in ("both", "noise"):
            noise = torch.randn(x.shape, generator=generator)
        ts.append(t)
        noises.append(noise)
    t_all = torch.cat(ts).to(x.device)
    eps = torch.cat(noises).to(device=x.device, dtype=x.dtype)
    x_rep = x.repeat(num_paths, *([1] * (x.dim() - 1)))
    return PathBatch(add_noise(x_rep, eps, t_all), t_all, velocity_target(x_rep, eps), labels.repeat(num_paths))
