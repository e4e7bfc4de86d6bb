"""The DDT: shapes, conditioning, the encoder/decoder split and a cached condition, both backbones."""

from __future__ import annotations

import pytest
import torch

from iclr26_generative_vision.nn.ddt import DDT
from iclr26_shared.errors import ConfigError


def randomize(model: DDT, scale: float) -> DDT:
    """Random values for every parameter (the zero-initialised gates would hide the conditioning)."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=gen))
    return model.eval()


def _ddt(arch: str, size: int = 8) -> DDT:
    torch.manual_seed(0)
    model = DDT(size, 1, 10, patch_size=2, hidden=32, encoder_depth=2, decoder_depth=1, heads=2, arch=arch)  # type: ignore[arg-type]
    return randomize(model, scale=0.2)


@pytest.mark.parametrize("arch", ["ddt", "dit"])
def test_shapes_and_conditioning(arch: str) -> None:
    model = _ddt(arch)
    x, t = torch.randn(3, 1, 8, 8), torch.tensor([0.1, 0.5, 0.9])
    out = model(x, t, torch.tensor([0, 1, 10]), align_layer=2)
    assert out.velocity.shape == (3, 1, 8, 8) and out.condition.shape == (3, 16, 32)
    assert out.hidden is not None and out.hidden.shape == (3, 16, 32)
    assert model(x, t, torch.tensor([0, 1, 10])).hidden is None
    other = model(x, t, torch.tensor([5, 1, 10])).velocity
    assert not torch.allclose(other[0], out.velocity[0]) and torch.equal(other[1:], out.velocity[1:])
    later = model(x, t + 0.05, torch.tensor([0, 1, 10])).velocity
    assert not torch.allclose(later, out.velocity)


def test_patchify_roundtrip_and_cached_condition() -> None:
    model = _ddt("ddt")
    x = torch.randn(2, 1, 8, 8)
    assert torch.equal(model.unpatchify(model.patchify(x)), x)
    t, y = torch.tensor([0.3, 0.7]), torch.tensor([2, 3])
    full = model(x, t, y)
    reused = model(x, t, y, condition=full.condition)  # same condition: the decoder alone gives the same velocity
    torch.testing.assert_close(reused.velocity, full.velocity)
    assert reused.hidden is None


def test_encoder_output_is_the_aligned_layer_by_default() -> None:
    model = _ddt("ddt")
    x, t, y = torch.randn(2, 1, 8, 8), torch.tensor([0.3, 0.7]), torch.tensor([2, 3])
    z, hidden = model.encode(x, t, y, align_layer=model.encoder_depth)
    assert hidden is not None and torch.equal(z, hidden)
    cond = model(x, t, y).condition
    torch.testing.assert_close(cond, torch.nn.functional.silu(model.time_embed(t)[:, None] + z))


def test_fresh_model_predicts_zero_and_bad_shapes_raise() -> None:
    torch.manual_seed(0)
    model = DDT(8, 1, 10, hidden=32, heads=2)
    out = model(torch.randn(2, 1, 8, 8), torch.rand(2), torch.tensor([0, 1]))
    assert torch.count_nonzero(out.velocity) == 0  # zero-initialised output layer and adaLN gates (DiT)
    with pytest.raises(ConfigError, match="patch_size"):
        DDT(8, 1, 10, patch_size=3)
    with pytest.raises(ConfigError, match="hidden"):
        DDT(8, 1, 10, hidden=24, heads=4)  # head size 6: no 2-D RoPE
    DDT(8, 1, 10, hidden=24, heads=4, arch="dit")  # the plain variant has no RoPE constraint
