"""Shapes, the null label and gradients of the DiT and the residual MLP."""

from __future__ import annotations

from typing import Any, cast

import pytest
import torch

from iclr26_generative_vision.nn.dit import ClassConditionalDiT, DirectAttention
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


def test_dit_direct_attention_is_diffusers_attention_bit_for_bit() -> None:
    """The blocks' DirectAttention (no per-call signature inspection) gives diffusers' Attention outputs
    exactly, for the whole DiT and with extra keyword arguments (the parent's path)."""
    from diffusers.models.attention_processor import Attention

    torch.manual_seed(0)
    model = ClassConditionalDiT(8, 1, 10, patch_size=2, hidden=32, depth=3, heads=2).eval()
    for p in model.parameters():  # the zero-initialised output layers would hide any difference
        torch.nn.init.normal_(p, std=0.2)
    attns: list[Any] = [cast(Any, b).attn1 for b in model.transformer_blocks]
    assert all(type(a) is DirectAttention for a in attns)
    x, t, y = torch.randn(5, 1, 8, 8), torch.tensor([1, 100, 500, 900, 999]), torch.tensor([0, 3, 5, 9, 10])
    with torch.no_grad():
        direct = model(x, t, y)
        h = torch.randn(5, 16, 32)
        direct_kw = attns[0](h, attention_mask=None, ip_adapter_masks=None)
        for a in attns:
            a.__class__ = Attention
        plain = model(x, t, y)
        plain_kw = attns[0](h, attention_mask=None, ip_adapter_masks=None)
    assert direct.abs().sum() > 0
    assert torch.equal(direct, plain)
    assert torch.equal(direct_kw, plain_kw)
    assert set(model.state_dict()) == set(ClassConditionalDiT(8, 1, 10, hidden=32, depth=3, heads=2).state_dict())


def test_dit_activation_switch(tmp_path) -> None:  # noqa: ANN001
    """``activation="gelu"`` gives the blocks exact GELU (tanh GELU by default, DiT's); it is saved in the
    config and a saved model loads back with it; other names raise ConfigError naming the field."""
    import torch.nn.functional as F

    x = torch.linspace(-4, 4, 101)
    models = {
        a: ClassConditionalDiT(8, 1, 10, hidden=16, depth=2, heads=2, activation=a)
        for a in ("gelu", "gelu-approximate")
    }
    assert ClassConditionalDiT(8, 1, 10, hidden=16, depth=2, heads=2).config["activation"] == "gelu-approximate"
    for name, approx in (("gelu", "none"), ("gelu-approximate", "tanh")):
        act: Any = cast(Any, models[name].transformer_blocks)[0].ff.net[0]
        assert torch.equal(act.gelu(x), F.gelu(x, approximate=approx))
    models["gelu"].save_pretrained(tmp_path)
    loaded = ClassConditionalDiT.from_pretrained(tmp_path)
    loaded_blocks: Any = loaded.transformer_blocks
    assert loaded.config["activation"] == "gelu" and loaded_blocks[1].ff.net[0].approximate == "none"
    with pytest.raises(ConfigError, match="dit_activation"):
        ClassConditionalDiT(8, 1, 10, activation="relu")


def test_dit_bad_shapes() -> None:
    with pytest.raises(ConfigError, match="patch_size"):
        ClassConditionalDiT(8, 1, 10, patch_size=3)
    with pytest.raises(ConfigError, match="dit_heads"):
        ClassConditionalDiT(8, 1, 10, hidden=10, heads=3)


def test_mlp_shapes() -> None:
    model = ResidualMLPDenoiser(2, 4, hidden=8, depth=2)
    out = model(torch.randn(3, 2), torch.tensor([1, 2, 3]), torch.tensor([0, 4, 2]))
    assert out.shape == (3, 2) and model.null_label == 4
