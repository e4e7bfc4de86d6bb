"""A pipeline-agnostic guided sampling loop: any denoiser, any diffusers scheduler, any diffusers guider.

diffusers' pipelines wrap their own models; this loop drives models they do not know (our DiT, the GMM
residual MLP, an exact closed-form denoiser) with the same guider protocol the modular pipelines use::

    for i, t in enumerate(scheduler.timesteps):
        guider.set_state(step=i, num_inference_steps=n, timestep=t)
        for batch in guider.prepare_inputs(conditions):          # [cond, uncond, cond-skip, ...]
            guider.prepare_models(denoiser)
            batch.noise_pred = denoiser(x_t, t, **batch-inputs)
            guider.cleanup_models(denoiser)
        x_t = scheduler.step(guider(batches).pred, t, x_t).prev_sample

The denoiser is called as ``denoiser(sample, timestep, **inputs)`` where ``inputs`` are the guider's
batch fields named in ``conditions`` (e.g. ``class_labels``); it returns the prediction in the space the
scheduler expects (``prediction_type``), shaped like ``sample``, or a tuple / output object whose first
item / ``.sample`` is that prediction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

__all__ = ["count_forward_passes", "guided_sample"]


def _unwrap(out: Any) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, tuple | list):
        return out[0]
    if hasattr(out, "sample"):
        return out.sample
    raise TypeError(f"denoiser returned {type(out).__name__}; expected a tensor, a tuple or an object with .sample")


@torch.no_grad()
def guided_sample(
    denoiser: torch.nn.Module,
    scheduler: Any,
    guider: Any,
    noise: torch.Tensor,
    conditions: Mapping[str, torch.Tensor | tuple[torch.Tensor, torch.Tensor]],
    num_inference_steps: int,
    *,
    generator: torch.Generator | None = None,
    on_step: Callable[[int, torch.Tensor], None] | None = None,
) -> torch.Tensor:
    """Sample ``x_0`` from ``noise`` ``[B, ...]`` with ``guider`` steering ``denoiser`` over ``scheduler``.

    Args:
        denoiser: ``denoiser(sample [B, ...], timestep [B], **inputs) -> prediction [B, ...]``.
        scheduler: A diffusers scheduler (``set_timesteps``, ``scale_model_input``, ``step``).
        guider: A diffusers guider (``ClassifierFreeGuidance``, ``SkipLayerGuidance``, ``AutoGuidance``,
            :class:`~iclr26_generative_vision.S2Guidance`, ...).
        noise: Initial noise ``[B, ...]`` (scaled by ``scheduler.init_noise_sigma`` here).
        conditions: Denoiser inputs: a tensor (same for every batch) or ``(cond, uncond)``.
        num_inference_steps: Number of denoising steps.
        generator: Generator for stochastic schedulers (DDPM, DDIM with eta > 0).
        on_step: Called as ``on_step(i, x_t)`` after each step.

    Returns:
        The final sample ``[B, ...]``.
    """
    if num_inference_steps < 1:
        raise ValueError(f"num_inference_steps must be >= 1, got {num_inference_steps}")
    scheduler.set_timesteps(num_inference_steps, device=noise.device)
    x = noise * scheduler.init_noise_sigma
    batch = noise.shape[0]
    for i, t in enumerate(scheduler.timesteps):
        guider.set_state(step=i, num_inference_steps=num_inference_steps, timestep=t)
        batches = guider.prepare_inputs(dict(conditions))
        model_in = scheduler.scale_model_input(x, t)
        timestep = t.expand(batch) if t.ndim == 0 else t
        for state in batches:
            guider.prepare_models(denoiser)
            try:
                inputs = {name: getattr(state, name) for name in conditions}
                state.noise_pred = _unwrap(denoiser(model_in, timestep, **inputs))
            finally:
                guider.cleanup_models(denoiser)
        pred = guider(batches).pred
        kwargs = {"generator": generator} if generator is not None else {}
        x = scheduler.step(pred, t, x, **kwargs).prev_sample
        if on_step is not None:
            on_step(i, x)
    return x


def count_forward_passes(guider: Any, num_inference_steps: int) -> int:
    """Number of denoiser forward passes (NFEs per sample) ``guider`` asks for over a sampling run."""
    total = 0
    for i in range(num_inference_steps):
        guider.set_state(step=i, num_inference_steps=num_inference_steps, timestep=torch.tensor(0))
        total += guider.num_conditions
    return total
