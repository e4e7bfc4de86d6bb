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

__all__ = ["count_forward_passes", "guided_sample", "rowwise_forward"]


def _unwrap(out: Any) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, tuple | list):
        return out[0]
    if hasattr(out, "sample"):
        return out.sample
    raise TypeError(f"denoiser returned {type(out).__name__}; expected a tensor, a tuple or an object with .sample")


def rowwise_forward(
    fn: Callable[..., Any], max_batch: int | None, sample: torch.Tensor, *args: Any, **kwargs: Any
) -> Any:
    """``fn(sample, *args, **kwargs)`` over row chunks of at most ``max_batch`` rows, concatenated.

    The ``B`` rows are split into ``⌈B / max_batch⌉`` balanced chunks (each more than ``max_batch / 2``
    rows), and every tensor argument whose first dimension is ``B`` is split with ``sample``; the outputs (a
    tensor, or a tuple / NamedTuple of tensors or None) are concatenated along dimension 0. For a model whose
    rows are independent (no batch statistics, as every denoiser here in eval mode) this is the unchunked
    forward up to the CPU kernels' choice of code path: bit for bit for the small DiTs and MLPs here at
    chunks of 16 images or more (tested; a chunk of a few images can differ in the last bit). On CPU,
    cache-sized chunks (~128 rows of the 8×8 DiTs) run ~1.4x faster than one forward of 500 rows.
    ``max_batch`` None or ``>= B``: one call.
    """
    b = sample.shape[0]
    if max_batch is None or max_batch >= b:
        return fn(sample, *args, **kwargs)
    if max_batch < 1:
        raise ValueError(f"max_batch must be >= 1 or None, got {max_batch}")
    bounds = torch.linspace(0, b, -(-b // max_batch) + 1).round().long().tolist()

    def part(v: Any, lo: int, hi: int) -> Any:
        return v[lo:hi] if isinstance(v, torch.Tensor) and v.ndim > 0 and v.shape[0] == b else v

    outs = [
        fn(sample[lo:hi], *(part(a, lo, hi) for a in args), **{k: part(v, lo, hi) for k, v in kwargs.items()})
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    first = outs[0]
    if isinstance(first, torch.Tensor):
        return torch.cat(outs)
    if isinstance(first, tuple):
        cols = [None if first[j] is None else torch.cat([o[j] for o in outs]) for j in range(len(first))]
        named: Any = type(first)  # a NamedTuple class takes its fields positionally
        return named(*cols) if hasattr(first, "_fields") else tuple(cols)
    raise TypeError(f"rowwise_forward: cannot concatenate outputs of type {type(first).__name__}")


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
    max_batch: int | None = None,
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
        max_batch: Rows per denoiser forward (None: the whole batch); the same samples, see
            :func:`rowwise_forward`.

    Returns:
        The final sample ``[B, ...]``.
    """
    if num_inference_steps < 1:
        raise ValueError(f"num_inference_steps must be >= 1, got {num_inference_steps}")

    def _predict(*args: Any, **kwargs: Any) -> torch.Tensor:
        return _unwrap(denoiser(*args, **kwargs))

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
                state.noise_pred = rowwise_forward(_predict, max_batch, model_in, timestep, **inputs)
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
