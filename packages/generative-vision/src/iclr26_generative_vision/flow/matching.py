"""Flow matching with the linear (rectified-flow) path, in one time convention for the whole package.

**Convention (SiT / REPA / diffusers' ``FlowMatchEulerDiscreteScheduler``): t = 0 is clean, t = 1 is noise**::

    x_t = α_t x + σ_t ε,   α_t = 1 − t,  σ_t = t,        x [B, C, S, S],  ε ~ N(0, I),  t [B] in [0, 1]
    v*(x_t, t) = α̇_t x + σ̇_t ε = ε − x                  (the velocity target; dx_t/dt)

DDT's own code uses the opposite direction (``x_t = t·x + (1−t)·ε``, ``v = x − ε``, t = 1 clean): with
``t_ddt = 1 − t`` both describe the same path, and DDT's velocity is minus ours. DDT's guidance interval
t_ddt ∈ (0.3, 1) is t ∈ (0, 0.7) here.

Training times: ``lognormal`` (DDT / SD3: t = sigmoid(n), n ~ N(0, 1); symmetric, so the convention flip
does not change it) or ``uniform`` (SiT).
"""

from __future__ import annotations

from typing import Literal

import torch

__all__ = ["TimeSampling", "add_noise", "sample_times", "velocity_target"]

TimeSampling = Literal["lognormal", "uniform"]


def add_noise(x: torch.Tensor, noise: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``x_t = (1 − t)·x + t·ε`` with ``t`` ``[B]`` broadcast over the image dims (equals diffusers'
    ``FlowMatchEulerDiscreteScheduler.scale_noise`` at σ = t)."""
    tt = t.reshape(-1, *([1] * (x.dim() - 1))).to(x.dtype)
    return (1 - tt) * x + tt * noise


def velocity_target(x: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """``v* = α̇ x + σ̇ ε = ε − x`` (independent of t for the linear path)."""
    return noise - x


def sample_times(n: int, kind: TimeSampling, generator: torch.Generator) -> torch.Tensor:
    """``n`` training times in (0, 1): ``sigmoid(N(0, 1))`` (lognormal) or ``U(0, 1)``."""
    if kind == "lognormal":
        return torch.sigmoid(torch.randn(n, generator=generator))
    return torch.rand(n, generator=generator)
