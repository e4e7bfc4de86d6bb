"""Euler sampling of a flow-matching DDT with a CFG interval and encoder sharing (DDT's ``EulerSampler``).

The ODE ``dx/dt = v(x, t)`` is integrated from ``t = 1`` (noise) to ``t = 0`` (clean) on a uniform grid of
``num_steps`` steps with diffusers' ``FlowMatchEulerDiscreteScheduler`` (``x ← x + (t_next − t)·v``, its
σ is our t, see :mod:`iclr26_generative_vision.flow.matching`). Classifier-free guidance
``v = v_u + λ(v_c − v_u)`` is applied only for ``t`` in ``cfg_interval`` (DDT: t_ddt ∈ (0.3, 1), i.e.
(0, 0.7) here); elsewhere the conditional velocity alone is used.

**Encoder sharing**: the token-wise condition ``s`` the encoder produces is recomputed only every
``refresh_rate`` steps (steps 0, k, 2k, …) and reused by the decoder in between, so a step without a
refresh costs only the decoder's ``n_dec`` blocks. ``refresh_rate=1`` is plain sampling. The
unconditional branch keeps a cache of its own (refreshed on the same steps, or on first use).

Any :class:`~iclr26_generative_vision.flow.adapter.FlowModel` (a user's transformer in a
:class:`~iclr26_generative_vision.flow.adapter.HookedFlowModel`) samples the same way with
``refresh_rate=1`` (encoder sharing needs the DDT's encoder/decoder split).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

import torch

from iclr26_generative_vision.flow.adapter import FlowModel, check_flow_inputs
from iclr26_generative_vision.guidance.sampler import rowwise_forward
from iclr26_generative_vision.nn.ddt import DDT
from iclr26_shared.errors import DataError

if TYPE_CHECKING:
    from diffusers.schedulers.scheduling_flow_match_euler_discrete import FlowMatchEulerDiscreteScheduler

__all__ = ["euler_sample", "euler_step", "flow_scheduler"]


def flow_scheduler(num_steps: int, device: torch.device | str = "cpu") -> FlowMatchEulerDiscreteScheduler:
    """diffusers' ``FlowMatchEulerDiscreteScheduler`` on the uniform grid ``t = 1, 1 − 1/n, …, 1/n`` (then 0),
    without the SD3 shift; its σ is our t."""
    from diffusers.schedulers.scheduling_flow_match_euler_discrete import FlowMatchEulerDiscreteScheduler

    sched = FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, shift=1.0)
    sched.set_timesteps(sigmas=torch.linspace(1.0, 0.0, num_steps + 1)[:-1].tolist(), device=device)
    return sched


def euler_step(
    sched: FlowMatchEulerDiscreteScheduler, velocity: torch.Tensor, timestep: torch.Tensor, x: torch.Tensor
) -> torch.Tensor:
    """One scheduler step ``x + (t_next − t)·v`` (diffusers' own update)."""
    out = sched.step(cast(Any, velocity), cast(Any, timestep), cast(Any, x), return_dict=False)
    return cast(torch.Tensor, out[0])


@torch.no_grad()
def euler_sample(
    model: DDT | FlowModel,
    noise: torch.Tensor,
    labels: torch.Tensor,
    *,
    num_steps: int = 50,
    guidance_scale: float = 1.0,
    cfg_interval: tuple[float, float] = (0.0, 0.7),
    refresh_rate: int = 1,
    max_batch: int | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """Integrate from ``noise`` ``[B, C, S, S]`` (t = 1) with ``labels`` ``[B]``; returns ``(x_0, info)``
    where ``info`` holds ``seconds``, ``encoder_passes`` and ``decoder_passes`` (per sample, counting the
    unconditional branch) and the relative block cost ``block_evals`` (blocks run per sample).
    ``max_batch``: rows per model forward (None: all at once; the same samples, see ``rowwise_forward``).
    ``model``: our DDT or any :class:`~iclr26_generative_vision.flow.adapter.FlowModel` (then
    ``refresh_rate`` must be 1, ``encoder_passes`` counts full forwards and ``block_evals`` is None)."""
    if refresh_rate < 1:
        raise ValueError(f"refresh_rate must be >= 1, got {refresh_rate}")
    is_ddt = isinstance(model, DDT)
    if not is_ddt and not isinstance(model, FlowModel):
        raise DataError(
            f"euler_sample: model must be our DDT or a FlowModel (HookedFlowModel), got {type(model).__name__}"
        )
    if not is_ddt and refresh_rate != 1:
        raise DataError(f"euler_sample: refresh_rate = {refresh_rate} needs the DDT's encoder/decoder split; use 1")
    check_flow_inputs(
        "euler_sample", noise, torch.zeros(noise.shape[0] if noise.dim() else 0, device=noise.device), labels
    )
    sched = flow_scheduler(num_steps, noise.device)
    sigmas = cast(torch.Tensor, sched.sigmas).tolist()
    timesteps = cast(torch.Tensor, sched.timesteps)
    null = torch.full_like(labels, model.null_label)
    cache: dict[str, torch.Tensor | None] = {"c": None, "u": None}
    enc = dec = 0
    x = noise
    start = time.perf_counter()
    for i, timestep in enumerate(timesteps):
        t = torch.full((x.shape[0],), sigmas[i], device=x.device, dtype=x.dtype)
        refresh = i % refresh_rate == 0
        branches = ["c"]
        if guidance_scale != 1.0 and cfg_interval[0] < sigmas[i] <= cfg_interval[1]:
            branches.append("u")
        out: dict[str, torch.Tensor] = {}
        for name in branches:
            y = labels if name == "c" else null
            if not is_ddt:
                out[name] = rowwise_forward(cast(FlowModel, model).flow_forward, max_batch, x, t, y).velocity
                enc += 1
                dec += 1
                continue
            cached = None if refresh else cache[name]
            res = rowwise_forward(model, max_batch, x, t, y, condition=cached)
            if cached is None:
                cache[name] = res.condition
                enc += 1
            dec += 1
            out[name] = res.velocity
        v = out["c"] if len(out) == 1 else out["u"] + guidance_scale * (out["c"] - out["u"])
        x = euler_step(sched, v, timestep, x)
    seconds = time.perf_counter() - start
    return x, {
        "seconds": seconds,
        "encoder_passes": enc,
        "decoder_passes": dec,
        "block_evals": enc * model.encoder_depth + dec * model.decoder_depth if isinstance(model, DDT) else None,
    }
