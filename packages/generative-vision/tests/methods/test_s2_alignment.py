"""The correction-direction diagnostic on a denoiser whose answer is known in closed form."""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from iclr26_generative_vision.guidance.blocks import register_skippable_block
from iclr26_generative_vision.methods.s2_guidance.config import PRESETS
from iclr26_generative_vision.methods.s2_guidance.sampling import correction_alignment, guider_settings


@register_skippable_block
class _AddLabel(nn.Module):
    def forward(self, hidden_states: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        return hidden_states + emb


class _LabelSum(nn.Module):
    """``D(x, c) = x + L·e_c`` with ``e_∅ = 0``: dropping one of the L blocks gives ``x + (L−1)·e_c``, so
    ``D̂_c − D_c = −e_c`` and ``D_u − D_c = −L·e_c``: cosine 1, norm ratio 1/L."""

    def __init__(self, depth: int, dim: int = 3, num_classes: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(_AddLabel() for _ in range(depth))
        emb = torch.randn(num_classes + 1, dim, generator=torch.Generator().manual_seed(0))
        emb[num_classes] = 0.0
        self.register_buffer("emb", emb)
        self.emb: torch.Tensor

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor) -> torch.Tensor:
        h, e = sample, self.emb[class_labels]
        for block in self.blocks:
            h = block(h, e)
        return h


def test_dropping_a_block_toward_uncond_gives_cosine_one() -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], num_inference_steps=10)
    model = _LabelSum(depth=10)
    labels = torch.arange(4).repeat(8)
    x0 = torch.randn(32, 3, generator=torch.Generator().manual_seed(1))
    out = correction_alignment(model, 10, guider_settings(cfg, 3.0, seed=0), cfg, x0, labels, 4, seed=0)
    assert out["steps"] == 8  # the central 80% of 10 steps
    assert abs(out["cosine"] - 1.0) < 1e-9
    assert abs(out["norm_ratio"] - 0.1) < 1e-9
