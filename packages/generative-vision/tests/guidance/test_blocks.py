"""Dropping a block (diffusers' skip hook) is the identity on that block, for our MLP and DiT blocks."""

from __future__ import annotations

import pytest
import torch
from diffusers.hooks.hooks import HookRegistry
from diffusers.hooks.layer_skip import LayerSkipConfig, _apply_layer_skip_hook

from iclr26_generative_vision.guidance.blocks import find_blocks
from iclr26_generative_vision.guidance.masks import BlockMaskSampler, num_dropped
from iclr26_generative_vision.nn.dit import ClassConditionalDiT
from iclr26_generative_vision.nn.resmlp import ResidualMLPDenoiser
from iclr26_shared.errors import ConfigError


def test_dropped_mlp_block_is_identity(mlp: ResidualMLPDenoiser) -> None:
    x, t, y = torch.randn(6, 2), torch.randint(0, 1000, (6,)), torch.randint(0, 5, (6,))
    _apply_layer_skip_hook(mlp, LayerSkipConfig([4], fqn="blocks"), name="t")
    try:
        h = torch.randn(6, 16)
        emb = torch.randn(6, 16)
        assert torch.equal(mlp.blocks[4](h, emb), h)
        assert not torch.equal(mlp.blocks[3](h, emb), h)
        skipped = mlp(x, t, y)
    finally:
        HookRegistry.check_if_exists_or_initialize(mlp).remove_hook("t", recurse=True)
    # manual forward without block 4
    temb = mlp.time_embedding(mlp.time_proj(t).to(x.dtype)) + mlp.label_embedding(y)
    h = mlp.inp(x)
    for i, block in enumerate(mlp.blocks):
        if i != 4:
            h = block(h, temb)
    torch.testing.assert_close(skipped, mlp.out(mlp.out_norm(h)))


def test_dropped_dit_block_is_identity(dit: ClassConditionalDiT) -> None:
    h = torch.randn(2, 4, 16)
    mod = torch.randn(2, 96)
    _apply_layer_skip_hook(dit, LayerSkipConfig([1], fqn="auto"), name="t")
    try:
        assert torch.equal(dit.transformer_blocks[1](h, timestep=mod), h)
        assert not torch.equal(dit.transformer_blocks[2](h, timestep=mod), h)
    finally:
        HookRegistry.check_if_exists_or_initialize(dit).remove_hook("t", recurse=True)
    assert not torch.equal(dit.transformer_blocks[1](h, timestep=mod), h)


def test_find_blocks(mlp: ResidualMLPDenoiser, dit: ClassConditionalDiT) -> None:
    assert find_blocks(mlp)[0] == "blocks" and len(find_blocks(mlp)[1]) == 10
    assert find_blocks(dit)[0] == "transformer_blocks"
    with pytest.raises(ConfigError, match="fqn"):
        find_blocks(mlp, "nope")


def test_unregistered_block_class_is_reported() -> None:
    class Plain(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = torch.nn.ModuleList([torch.nn.Linear(2, 2)])

    with pytest.raises(ConfigError, match="register_skippable_block"):
        find_blocks(Plain())


def test_mask_sampler() -> None:
    s = BlockMaskSampler(0.1, (0,), seed=0)
    assert num_dropped(24, 0.1) == 2 and num_dropped(5, 0.1) == 1
    draws = [s.sample(24) for _ in range(200)]
    assert all(len(m) == 2 and 0 not in m and all(0 < b < 24 for b in m) for m in draws)
    assert {b for m in draws for b in m} == set(range(1, 24))  # every eligible block gets drawn
    with pytest.raises(ConfigError, match="exclude_blocks"):
        BlockMaskSampler(0.1, (0, -1), seed=0).sample(2)
    with pytest.raises(ConfigError, match="drop_ratio"):
        BlockMaskSampler(1.0)
