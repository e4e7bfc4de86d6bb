"""S² with the pruned pass batched together with the conditional pass (the benchmark's third variant).

The guider protocol runs the S² pass as a third, sequential forward (peak memory as CFG, +1 NFE of time).
Alternatively the conditional and the pruned conditional pass share one forward of batch ``2B``: the dropped
blocks are computed for all rows, and their output is replaced by their input (identity) on the pruned
rows. Same result, fewer kernel launches, twice the activation memory of that pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

__all__ = ["rowwise_skip", "s2_batched_prediction"]


@contextmanager
def rowwise_skip(blocks: torch.nn.ModuleList, indices: Sequence[int], rows: torch.Tensor) -> Iterator[None]:
    """Within the context, blocks ``indices`` act as the identity on the batch rows where ``rows`` [B] is True."""
    rows = rows.bool()

    def hook(module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> torch.Tensor:
        h_in = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        keep = rows.view(-1, *([1] * (output.ndim - 1)))
        return torch.where(keep, h_in, output)

    handles = [blocks[i].register_forward_hook(hook, with_kwargs=True) for i in indices]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _cat(a: Any, b: Any) -> Any:
    return torch.cat([a, b]) if isinstance(a, torch.Tensor) else a


@torch.no_grad()
def s2_batched_prediction(
    denoiser: torch.nn.Module,
    blocks: torch.nn.ModuleList,
    sample: torch.Tensor,
    timestep: torch.Tensor,
    cond: dict[str, Any],
    uncond: dict[str, Any],
    mask: Sequence[int],
    guidance_scale: float,
    s2_scale: float,
) -> torch.Tensor:
    """Eq. 4 with ``D_c`` and ``D̂_c,m`` from one forward of batch ``2B`` and ``D_u`` from another.

    ``sample`` ``[B, ...]``, ``timestep`` ``[B]``; ``cond``/``uncond`` are the denoiser's keyword inputs.
    Returns ``D_u + λ(D_c − D_u) − ω(D̂_c − D_c)`` ``[B, ...]``.
    """
    b = sample.shape[0]
    pred_uncond = denoiser(sample, timestep, **uncond)
    rows = torch.arange(2 * b, device=sample.device) >= b
    with rowwise_skip(blocks, mask, rows):
        both = denoiser(
            torch.cat([sample, sample]), torch.cat([timestep, timestep]), **{k: _cat(v, v) for k, v in cond.items()}
        )
    pred_cond, pred_skip = both[:b], both[b:]
    return pred_uncond + guidance_scale * (pred_cond - pred_uncond) - s2_scale * (pred_skip - pred_cond)
