"""S2Guidance: reduces to diffusers' CFG (ω = 0) and SLG (fixed mask); masks, interval, formulas, errors."""

from __future__ import annotations

import pytest
import torch
from diffusers.guiders.classifier_free_guidance import ClassifierFreeGuidance
from diffusers.guiders.skip_layer_guidance import SkipLayerGuidance
from diffusers.schedulers.scheduling_ddim import DDIMScheduler

from iclr26_generative_vision import S2Guidance
from iclr26_generative_vision.guidance.sampler import count_forward_passes, guided_sample
from iclr26_shared.errors import ConfigError


def _sample(model: torch.nn.Module, guider: object, steps: int = 10, n: int = 8, dim: int = 2) -> torch.Tensor:
    gen = torch.Generator().manual_seed(1)
    noise = torch.randn(n, dim, generator=gen)
    labels = torch.arange(n) % 4
    cond = {"class_labels": (labels, torch.full_like(labels, 4))}
    sched = DDIMScheduler(num_train_timesteps=1000, clip_sample=False)
    return guided_sample(model, sched, guider, noise, cond, steps)


def test_public_name_is_a_diffusers_guider() -> None:
    from diffusers.guiders.guider_utils import BaseGuidance

    assert issubclass(S2Guidance, BaseGuidance)


def test_omega_zero_equals_diffusers_cfg_exactly(mlp: torch.nn.Module) -> None:
    ours = _sample(mlp, S2Guidance(guidance_scale=3.0, s2_scale=0.0, seed=0))
    ref = _sample(mlp, ClassifierFreeGuidance(guidance_scale=3.0))
    assert torch.equal(ours, ref)
    # and S² with ω > 0 really differs (the test above is not vacuous)
    assert not torch.allclose(_sample(mlp, S2Guidance(guidance_scale=3.0, s2_scale=0.25, seed=0)), ref)


def test_fixed_mask_equals_skip_layer_guidance(mlp: torch.nn.Module) -> None:
    # SLG is active for int(start·n) < step < int(stop·n); S² for int(start·n) <= step < int(stop·n).
    ours = S2Guidance(guidance_scale=2.0, s2_scale=0.7, s2_start=0.1, s2_stop=1.0, fixed_blocks=[3, 6])
    slg = SkipLayerGuidance(
        guidance_scale=2.0,
        skip_layer_guidance_scale=0.7,
        skip_layer_guidance_start=0.0,
        skip_layer_guidance_stop=1.0,
        skip_layer_config={"indices": [3, 6], "fqn": "auto"},  # `skip_layer_guidance_layers` is broken in 0.42.1
    )
    a, b = _sample(mlp, ours), _sample(mlp, slg)
    torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    assert not torch.allclose(a, _sample(mlp, ClassifierFreeGuidance(guidance_scale=2.0)))


def test_fixed_mask_equals_slg_on_the_dit(dit: torch.nn.Module) -> None:
    ours = S2Guidance(guidance_scale=2.0, s2_scale=0.5, s2_start=0.2, s2_stop=1.0, fixed_blocks=[2])  # 5 steps
    slg = SkipLayerGuidance(
        guidance_scale=2.0,
        skip_layer_guidance_scale=0.5,
        skip_layer_guidance_start=0.0,
        skip_layer_guidance_stop=1.0,
        skip_layer_config={"indices": [2], "fqn": "auto"},
    )

    def run(g: object) -> torch.Tensor:
        gen = torch.Generator().manual_seed(3)
        noise = torch.randn(4, 1, 8, 8, generator=gen)
        labels = torch.tensor([0, 1, 2, 3])
        cond = {"class_labels": (labels, torch.full_like(labels, 10))}
        return guided_sample(dit, DDIMScheduler(num_train_timesteps=1000), g, noise, cond, 5)

    torch.testing.assert_close(run(ours), run(slg), rtol=1e-5, atol=1e-6)


def test_mask_is_redrawn_every_step_and_never_excludes(mlp: torch.nn.Module) -> None:
    steps = 20
    g = S2Guidance(guidance_scale=2.0, drop_ratio=0.2, s2_start=0.0, s2_stop=1.0, exclude_blocks=[0, 9], seed=5)
    _sample(mlp, g, steps=steps)
    assert [s for s, _ in g.mask_history] == list(range(steps))  # one fresh mask per step
    masks = [m for _, m in g.mask_history]
    assert all(len(m) == 2 for m in masks)  # round(0.2 · 10) blocks
    assert all(0 not in m and 9 not in m and len(set(m)) == len(m) for m in masks)
    assert len(set(masks)) > 5
    assert sum(a != b for a, b in zip(masks, masks[1:], strict=False)) >= steps // 2


def test_naive_s2_draws_n_masks_per_step(mlp: torch.nn.Module) -> None:
    g = S2Guidance(guidance_scale=2.0, num_subnetworks=3, s2_start=0.0, s2_stop=1.0, seed=0)
    _sample(mlp, g, steps=4)
    assert [s for s, _ in g.mask_history] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert count_forward_passes(g, 4) == 4 * (2 + 3)


def test_interval_is_respected(mlp: torch.nn.Module) -> None:
    g = S2Guidance(guidance_scale=2.0, seed=0)  # paper default: central 80%
    _sample(mlp, g, steps=20)
    assert sorted({s for s, _ in g.mask_history if s is not None}) == list(range(2, 18))
    assert count_forward_passes(g, 20) == 2 * 20 + 16


def test_seeded_masks_are_reproducible(mlp: torch.nn.Module) -> None:
    runs = []
    for seed in (7, 7, 8):
        g = S2Guidance(guidance_scale=2.0, s2_start=0.0, s2_stop=1.0, seed=seed)
        out = _sample(mlp, g, steps=12)
        runs.append(([m for _, m in g.mask_history], out))
    assert runs[0][0] == runs[1][0] and torch.equal(runs[0][1], runs[1][1])
    assert runs[0][0] != runs[2][0]


def test_combination_formulas() -> None:
    gen = torch.Generator().manual_seed(0)
    d_c, d_u, s1, s2 = (torch.randn(3, 4, generator=gen) for _ in range(4))
    lam, om = 4.0, 0.3
    g = S2Guidance(guidance_scale=lam, s2_scale=om)
    torch.testing.assert_close(g.forward(d_c, d_u, pred_cond_skip=s1).pred, d_u + lam * (d_c - d_u) - om * (s1 - d_c))
    g = S2Guidance(guidance_scale=lam, s2_scale=om, formulation="appendix")
    torch.testing.assert_close(g.forward(d_c, d_u, pred_cond_skip=s1).pred, d_u + lam * (d_c - d_u) - om * s1)
    g = S2Guidance(guidance_scale=lam, s2_scale=om, num_subnetworks=2)
    out = g.forward(d_c, d_u, pred_cond_skip_0=s1, pred_cond_skip_1=s2).pred
    torch.testing.assert_close(out, d_u + lam * (d_c - d_u) - om / 2 * ((s1 - d_c) + (s2 - d_c)))
    with pytest.raises(ValueError, match="pred_cond_skip"):
        S2Guidance(guidance_scale=lam).forward(d_c, d_u)


def test_hooks_are_removed_after_sampling(mlp: torch.nn.Module) -> None:
    x, t, y = torch.randn(5, 2), torch.full((5,), 500), torch.zeros(5, dtype=torch.long)
    before = mlp(x, t, y)
    _sample(mlp, S2Guidance(guidance_scale=2.0, s2_start=0.0, s2_stop=1.0, seed=0), steps=5)
    assert torch.equal(mlp(x, t, y), before)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"s2_scale": -0.1}, "s2_scale"),
        ({"drop_ratio": 1.0}, "drop_ratio"),
        ({"drop_ratio": 1.5}, "drop_ratio"),
        ({"drop_ratio": 0.0}, "drop_ratio"),
        ({"num_subnetworks": 0}, "num_subnetworks"),
        ({"formulation": "comfyui"}, "formulation"),
        ({"s2_start": 0.8, "s2_stop": 0.5}, "s2_stop"),
        ({"fixed_blocks": []}, "fixed_blocks"),
    ],
)
def test_bad_configs_raise_config_error(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        S2Guidance(**kwargs)


def test_no_droppable_blocks_raise_config_error(mlp: torch.nn.Module) -> None:
    g = S2Guidance(guidance_scale=2.0, s2_start=0.0, exclude_blocks=list(range(10)))
    with pytest.raises(ConfigError, match="exclude_blocks"):
        _sample(mlp, g, steps=3)
    # the hooks of the failed step are not left behind
    x, t, y = torch.randn(2, 2), torch.full((2,), 10), torch.zeros(2, dtype=torch.long)
    assert torch.isfinite(mlp(x, t, y)).all()


def test_model_without_blocks_raises_config_error() -> None:
    class NoBlocks(torch.nn.Module):
        def forward(self, x: torch.Tensor, t: torch.Tensor, class_labels: torch.Tensor) -> torch.Tensor:
            return x

    with pytest.raises(ConfigError, match="fqn"):
        _sample(NoBlocks(), S2Guidance(guidance_scale=2.0, s2_start=0.0), steps=2)
