"""Shapes, the null label and gradients of the DiT and the residual MLP."""

from __future__ import annotations

import pytest
import torch

from iclr26_generative_vision.nn.dit import ClassConditionalDiT
from iclr26_generative_vision.nn.resmlp import ResidualMLPDenoiser
from iclr26_shared.errors import ConfigError


def test_dit_shapes_and_gradients() -> None:
    torch.manual_seed(0)
    model = ClassConditionalDiT(8, 1, 10, patch_size=2, hidden=16, depth=3, heads=2)
    x = torch.randn(5, 1, 8, 8)
    out = model(x, torch.randint(0, 1000, (5,)), torch.randint(0, 11, (5,)))
    assert out.shape == x.shape
    assert torch.equal(out, torch.zeros_like(out))  # DiT zero-init of the output layer
    out.sum().backward()
    assert model.proj_out.weight.grad is not None and model.proj_out.weight.grad.abs().sum() > 0
    assert model.null_label == 10


def test_dit_unpatchify_is_the_inverse_of_patchify(dit: torch.nn.Module) -> None:
    # a model that predicts its own input patches: identity projections through an unpatchify round trip
    x = torch.arange(2 * 64, dtype=torch.float32).reshape(2, 1, 8, 8)
    p, g = 4, 2
    patches = x.reshape(2, 1, g, p, g, p).permute(0, 2, 4, 3, 5, 1).reshape(2, g * g, p * p)
    h = patches.reshape(2, g, g, p, p, 1).permute(0, 5, 1, 3, 2, 4).reshape(2, 1, 8, 8)
    assert torch.equal(h, x)


def test_dit_labels_matter(dit: torch.nn.Module) -> None:
    x, t = torch.randn(2, 1, 8, 8), torch.full((2,), 300)
    assert not torch.allclose(dit(x, t, torch.tensor([0, 0])), dit(x, t, torch.tensor([10, 10])))


def test_dit_bad_shapes() -> None:
    with pytest.raises(ConfigError, match="patch_size"):
        ClassConditionalDiT(8, 1, 10, patch_size=3)
    with pytest.raises(ConfigError, match="dit_heads"):
        ClassConditionalDiT(8, 1, 10, hidden=10, heads=3)


def test_mlp_shapes() -> None:
    model = ResidualMLPDenoiser(2, 4, hidden=8, depth=2)
    out = model(torch.randn(3, 2), torch.tensor([1, 2, 3]), torch.tensor([0, 4, 2]))
    assert out.shape == (3, 2) and model.null_label == 4
