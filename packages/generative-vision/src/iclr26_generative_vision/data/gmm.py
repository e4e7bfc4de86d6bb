"""Gaussian mixtures of the S²-Guidance toy experiments, with their exact (closed-form) denoiser.

Data ``p₀ = Σ_k π_k N(μ_k, s_k² I)``; one class per component. Under the forward process
``x_t = α_t x₀ + σ_t ε`` the marginal is ``p_t = Σ_k π_k N(α_t μ_k, (α_t² s_k² + σ_t²) I)`` and

    E[x₀ | x_t] = Σ_k r_k(x_t) [ μ_k + α_t s_k² / (α_t² s_k² + σ_t²) · (x_t − α_t μ_k) ],

with posterior responsibilities ``r_k(x_t) ∝ π_k N(x_t; α_t μ_k, (α_t² s_k² + σ_t²) I)``. The conditional
denoiser of class ``c`` uses component ``c`` alone, the unconditional one the whole mixture. The ε-space
prediction is ``ε̂ = (x_t − α_t E[x₀|x_t]) / σ_t``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from iclr26_shared.errors import ConfigError

__all__ = ["GaussianMixture", "ExactGMMDenoiser", "toy_mixture"]


@dataclass(frozen=True)
class GaussianMixture:
    """``K`` isotropic Gaussians in ``D`` dimensions.

    Attributes:
        means: ``[K, D]`` component means ``μ_k``.
        stds: ``[K]`` component standard deviations ``s_k``.
        weights: ``[K]`` mixture weights ``π_k`` (sum to 1).
    """

    means: torch.Tensor
    stds: torch.Tensor
    weights: torch.Tensor

    def __post_init__(self) -> None:
        k = self.means.shape[0]
        if self.means.ndim != 2 or self.stds.shape != (k,) or self.weights.shape != (k,):
            raise ConfigError("gmm", tuple(self.means.shape), "means [K, D] with stds [K] and weights [K]")
        if (self.stds <= 0).any() or (self.weights < 0).any() or abs(float(self.weights.sum()) - 1) > 1e-6:
            raise ConfigError("gmm", self.weights.tolist(), "positive stds and weights summing to 1")

    @property
    def num_components(self) -> int:
        """``K``."""
        return self.means.shape[0]

    @property
    def dim(self) -> int:
        """``D``."""
        return self.means.shape[1]

    def sample(self, n: int, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x [n, D], labels [n])`` from the mixture."""
        labels = torch.multinomial(self.weights, n, replacement=True, generator=generator)
        return self.sample_class(labels, generator), labels

    def sample_class(self, labels: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """One sample of each labelled component: ``[n, D]``."""
        eps = torch.randn(labels.shape[0], self.dim, generator=generator, dtype=self.means.dtype)
        return self.means[labels] + self.stds[labels, None] * eps

    def _component_terms(
        self, x_t: torch.Tensor, alpha: torch.Tensor, sigma: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-component log-density of ``x_t`` ``[B, K]`` and posterior mean of ``x₀`` ``[B, K, D]``."""
        a = alpha.reshape(-1, 1).to(x_t.dtype)  # [B, 1]
        s2 = sigma.reshape(-1, 1).to(x_t.dtype) ** 2
        var = a**2 * self.stds[None] ** 2 + s2  # [B, K]
        diff = x_t[:, None, :] - a[:, :, None] * self.means[None]  # [B, K, D]
        logp = -0.5 * (diff**2).sum(-1) / var - 0.5 * self.dim * torch.log(2 * math.pi * var)
        gain = (a * self.stds[None] ** 2 / var)[..., None]  # [B, K, 1]
        return logp, self.means[None] + gain * diff

    def posterior_mean(
        self, x_t: torch.Tensor, alpha: torch.Tensor, sigma: torch.Tensor, labels: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``E[x₀ | x_t]`` ``[B, D]``; with ``labels`` ``[B]`` the class-conditional one (component ``c``)."""
        logp, means = self._component_terms(x_t, alpha, sigma)
        if labels is not None:
            return means[torch.arange(x_t.shape[0]), labels]
        r = torch.softmax(logp + torch.log(self.weights)[None], dim=-1)  # [B, K]
        return (r[..., None] * means).sum(1)

    def log_density(self, x_t: torch.Tensor, alpha: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
        """``log p_t(x_t)`` ``[B]``."""
        logp, _ = self._component_terms(x_t, alpha, sigma)
        return torch.logsumexp(logp + torch.log(self.weights)[None], dim=-1)


def toy_mixture(dim: int, spread: float = 4.0, std: float = 1.0, dtype: torch.dtype = torch.float64) -> GaussianMixture:
    """The paper's toys: 1-D modes at ``±spread``; 2-D four modes at ``(±spread, ±spread)``; equal weights."""
    if dim == 1:
        means = torch.tensor([[-spread], [spread]], dtype=dtype)
    elif dim == 2:
        means = torch.tensor([[-spread, -spread], [-spread, spread], [spread, -spread], [spread, spread]], dtype=dtype)
    else:
        raise ConfigError("gmm_dims", dim, "1 or 2 (the paper's toy mixtures)")
    k = means.shape[0]
    return GaussianMixture(means, torch.full((k,), std, dtype=dtype), torch.full((k,), 1.0 / k, dtype=dtype))


class ExactGMMDenoiser(torch.nn.Module):
    """The exact ε-prediction of a :class:`GaussianMixture` under a DDPM schedule ``ᾱ_t``.

    ``forward(sample [B, D], timestep [B], class_labels [B]) -> ε̂ [B, D]``; label ``K`` (the null label)
    gives the unconditional mixture. It has no blocks, so only CFG-type guiders apply to it.
    """

    def __init__(self, gmm: GaussianMixture, alphas_cumprod: torch.Tensor) -> None:
        super().__init__()
        self.gmm = gmm
        self.alphas_cumprod: torch.Tensor
        self.register_buffer("alphas_cumprod", alphas_cumprod.to(torch.float64), persistent=False)

    @property
    def null_label(self) -> int:
        """The unconditional label ``K``."""
        return self.gmm.num_components

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor) -> torch.Tensor:
        abar = self.alphas_cumprod[timestep.long().cpu()].to(sample.device)
        alpha, sigma = abar.sqrt(), (1 - abar).sqrt()
        x = sample.to(torch.float64)
        x0 = torch.empty_like(x)
        uncond = class_labels == self.null_label
        if uncond.any():
            x0[uncond] = self.gmm.posterior_mean(x[uncond], alpha[uncond], sigma[uncond])
        if (~uncond).any():
            c = ~uncond
            x0[c] = self.gmm.posterior_mean(x[c], alpha[c], sigma[c], class_labels[c])
        eps = (x - alpha[:, None] * x0) / sigma[:, None]
        return eps.to(sample.dtype)
