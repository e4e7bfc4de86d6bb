"""The exact GMM denoiser against Monte-Carlo estimates, and the toy mixtures."""

from __future__ import annotations

import pytest
import torch

from iclr26_generative_vision.data.gmm import ExactGMMDenoiser, GaussianMixture, toy_mixture
from iclr26_shared.errors import ConfigError


def _se(w: torch.Tensor, x0: torch.Tensor, mean: torch.Tensor) -> torch.Tensor:
    """Standard error of a self-normalised importance-sampling mean: sqrt(Σ w_i² (x_i − mean)²)."""
    return ((w[..., None] ** 2) * (x0[None] - mean[:, None]) ** 2).sum(1).sqrt()


@pytest.mark.parametrize("dim", [1, 2])
@pytest.mark.parametrize("abar", [0.9, 0.3, 0.02])
def test_posterior_mean_matches_monte_carlo(dim: int, abar: float) -> None:
    gmm = toy_mixture(dim, spread=4.0, std=0.7)
    gen = torch.Generator().manual_seed(0)
    alpha, sigma = torch.tensor(abar, dtype=torch.float64).sqrt(), torch.tensor(1 - abar, dtype=torch.float64).sqrt()
    x0, labels = gmm.sample(200_000, gen)
    for c in (None, 1):
        # typical x_t of the forward process (of the mixture, or of class c)
        src = gmm.sample(6, gen)[0] if c is None else gmm.sample_class(torch.full((6,), c), gen)
        x_t = alpha * src + sigma * torch.randn(src.shape, generator=gen, dtype=torch.float64)
        # self-normalised importance sampling: E[x0|x_t] = E_p0[x0 p(x_t|x0)] / E_p0[p(x_t|x0)]
        logw = -((x_t[:, None, :] - alpha * x0[None]) ** 2).sum(-1) / (2 * sigma**2)  # [6, M]
        if c is not None:
            logw = logw.masked_fill(labels[None] != c, -torch.inf)
        w = torch.softmax(logw, dim=1)
        ok = 1 / (w**2).sum(1) > 100  # points with enough effective samples for the estimate to mean something
        assert ok.sum() >= 3
        mc = w @ x0
        lab = None if c is None else torch.full((6,), c)
        exact = gmm.posterior_mean(x_t, alpha.expand(6), sigma.expand(6), lab)
        assert ((exact - mc).abs() <= 5 * _se(w, x0, mc) + 1e-3)[ok].all(), (exact, mc)


def test_exact_denoiser_eps_and_null_label() -> None:
    gmm = toy_mixture(2)
    abar = torch.linspace(0.999, 0.001, 1000, dtype=torch.float64)
    den = ExactGMMDenoiser(gmm, abar)
    x = torch.randn(4, 2, dtype=torch.float64)
    t = torch.tensor([0, 100, 500, 999])
    a, s = abar[t].sqrt(), (1 - abar[t]).sqrt()
    eps_u = den(x, t, torch.full((4,), 4))
    torch.testing.assert_close(eps_u, (x - a[:, None] * gmm.posterior_mean(x, a, s)) / s[:, None])
    eps_c = den(x, t, torch.tensor([0, 1, 2, 3]))
    assert not torch.allclose(eps_c, eps_u)


def test_toy_mixtures_and_validation() -> None:
    one, two = toy_mixture(1), toy_mixture(2)
    assert one.means.flatten().tolist() == [-4.0, 4.0]
    assert two.num_components == 4 and two.means.abs().eq(4).all()
    with pytest.raises(ConfigError, match="gmm_dims"):
        toy_mixture(3)
    with pytest.raises(ConfigError, match="gmm"):
        GaussianMixture(torch.zeros(2, 1), torch.tensor([1.0, -1.0]), torch.tensor([0.5, 0.5]))
