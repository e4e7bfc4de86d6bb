"""The pipeline-agnostic sampler: the exact GMM denoiser through DDIM reproduces the true classes."""

from __future__ import annotations

import pytest
import torch
from diffusers.guiders.classifier_free_guidance import ClassifierFreeGuidance
from diffusers.schedulers.scheduling_ddim import DDIMScheduler
from diffusers.schedulers.scheduling_ddpm import DDPMScheduler

from iclr26_generative_vision.data.gmm import ExactGMMDenoiser, toy_mixture
from iclr26_generative_vision.guidance.sampler import count_forward_passes, guided_sample
from iclr26_generative_vision.metrics.distances import wasserstein_empirical


@pytest.mark.parametrize("scheduler", ["ddim", "ddpm"])
def test_exact_conditional_sampling_recovers_each_class(scheduler: str) -> None:
    gmm = toy_mixture(1, std=1.0)
    sched = (DDIMScheduler if scheduler == "ddim" else DDPMScheduler)(num_train_timesteps=1000, clip_sample=False)
    den = ExactGMMDenoiser(gmm, sched.alphas_cumprod)
    gen = torch.Generator().manual_seed(0)
    n = 2000
    labels = torch.tensor([0, 1]).repeat_interleave(n)
    noise = torch.randn(2 * n, 1, generator=gen, dtype=torch.float64)
    cond = {"class_labels": (labels, torch.full_like(labels, 2))}
    steps = 50
    out = guided_sample(den, sched, ClassifierFreeGuidance(guidance_scale=1.0), noise, cond, steps, generator=gen)
    for c in (0, 1):
        truth = gmm.sample_class(torch.full((n,), c), gen)
        assert wasserstein_empirical(out[labels == c], truth) < 0.15
    # CFG at λ = 3 moves the classes apart (much more with deterministic DDIM than with ancestral DDPM)
    cfg = guided_sample(den, sched, ClassifierFreeGuidance(guidance_scale=3.0), noise, cond, steps, generator=gen)
    min_shift = 0.7 if scheduler == "ddim" else 0.15
    assert cfg[labels == 1].mean() > out[labels == 1].mean() + min_shift
    assert cfg[labels == 0].mean() < out[labels == 0].mean() - min_shift


def test_count_forward_passes() -> None:
    assert count_forward_passes(ClassifierFreeGuidance(guidance_scale=3.0), 10) == 20
    assert count_forward_passes(ClassifierFreeGuidance(guidance_scale=1.0), 10) == 10


def test_bad_step_count() -> None:
    with pytest.raises(ValueError, match="num_inference_steps"):
        guided_sample(torch.nn.Identity(), DDIMScheduler(), ClassifierFreeGuidance(), torch.zeros(1, 1), {}, 0)


@pytest.mark.parametrize("guider", ["cfg", "s2", "naive-s2", "slg"])
def test_row_chunked_sampling_gives_the_same_samples(guider: str) -> None:
    """``max_batch`` splits every forward into row chunks (S²'s and DUPA's samplers use ~128): a model with
    independent rows gives the unchunked samples bit for bit, masks and skip hooks included."""
    from iclr26_generative_vision.guidance.factory import GuiderSettings, make_guider
    from iclr26_generative_vision.guidance.s2 import S2Guidance
    from iclr26_generative_vision.nn.dit import ClassConditionalDiT

    torch.manual_seed(0)
    model = ClassConditionalDiT(8, 1, 10, patch_size=2, hidden=32, depth=4, heads=2).eval()
    for p in model.parameters():  # the zero-initialised output layers would make every sample equal
        p.data.normal_(0, 0.05)
    noise = torch.randn(70, 1, 8, 8, generator=torch.Generator().manual_seed(1))  # chunks of 16+ images
    labels = torch.arange(70) % 10
    conditions = {"class_labels": (labels, torch.full_like(labels, 10))}
    outs = []
    for max_batch in (None, 20, 32, 70, 100):
        g = make_guider(guider, GuiderSettings(guidance_scale=2.0, s2_scale=0.5, seed=3), 4)
        if isinstance(g, S2Guidance):
            g.reseed(3)
        sched = DDIMScheduler(num_train_timesteps=1000, beta_schedule="linear", clip_sample=True)
        outs.append(guided_sample(model, sched, g, noise, conditions, 8, max_batch=max_batch))
    assert all(torch.equal(o, outs[0]) for o in outs[1:])
    assert outs[0].std() > 0.1 and not torch.equal(outs[0][0], outs[0][1])


def test_row_chunked_toy_sampling_gives_the_same_samples() -> None:
    """The toys' MLP at the quick preset's sizes (width 64, 10 blocks, 4,000 rows in chunks of 2,000)."""
    from iclr26_generative_vision.guidance.factory import GuiderSettings, make_guider
    from iclr26_generative_vision.nn.resmlp import ResidualMLPDenoiser

    torch.manual_seed(0)
    model = ResidualMLPDenoiser(2, 4, hidden=64, depth=10).eval()
    noise = torch.randn(4000, 2, generator=torch.Generator().manual_seed(1))
    labels = torch.arange(4000) % 4
    conditions = {"class_labels": (labels, torch.full_like(labels, 4))}
    outs = []
    for max_batch in (None, 2000):
        g = make_guider("s2", GuiderSettings(guidance_scale=3.0, seed=3), 10)
        sched = DDIMScheduler(num_train_timesteps=1000, beta_schedule="linear")
        outs.append(guided_sample(model, sched, g, noise, conditions, 5, max_batch=max_batch))
    assert torch.equal(outs[0], outs[1]) and outs[0].std() > 0.1


def test_rowwise_forward_splits_row_tensors_only_and_rejects_bad_sizes() -> None:
    from iclr26_generative_vision.guidance.sampler import rowwise_forward

    calls: list[int] = []

    def fn(x: torch.Tensor, w: torch.Tensor, *, shift: torch.Tensor, scale: float) -> tuple[torch.Tensor, None]:
        calls.append(x.shape[0])
        return x @ w * scale + shift, None

    x, w, shift = torch.randn(10, 3), torch.randn(3, 2), torch.randn(10, 2)
    out, none = rowwise_forward(fn, 4, x, w, shift=shift, scale=2.0)
    assert calls == [3, 4, 3] and none is None  # balanced chunks; w [3, 2] is not a row tensor: passed whole
    torch.testing.assert_close(out, x @ w * 2.0 + shift)
    with pytest.raises(ValueError, match="max_batch"):
        rowwise_forward(fn, 0, x, w, shift=shift, scale=1.0)
