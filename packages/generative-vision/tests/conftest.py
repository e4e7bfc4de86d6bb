"""Shared tiny, seeded models for the generative-vision tests."""

from __future__ import annotations

import logging
from typing import TypeVar

import pytest
import torch

from iclr26_generative_vision.nn.dit import ClassConditionalDiT
from iclr26_generative_vision.nn.resmlp import ResidualMLPDenoiser


@pytest.fixture(autouse=True)
def _quiet_diffusers() -> None:
    logging.getLogger("diffusers").setLevel(logging.ERROR)


M = TypeVar("M", bound=torch.nn.Module)


def randomize(model: M, seed: int = 0, scale: float = 0.2) -> M:
    """Give every parameter random values (zero-initialised output layers would make all guiders agree)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=gen))
    return model.eval()


@pytest.fixture
def mlp() -> ResidualMLPDenoiser:
    torch.manual_seed(0)
    return randomize(ResidualMLPDenoiser(dim=2, num_classes=4, hidden=16, depth=10))


@pytest.fixture
def dit() -> ClassConditionalDiT:
    torch.manual_seed(0)
    return randomize(ClassConditionalDiT(8, 1, 10, patch_size=4, hidden=16, depth=5, heads=2), scale=0.3)
