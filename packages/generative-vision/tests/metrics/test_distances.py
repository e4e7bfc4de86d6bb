"""Wasserstein, Fréchet and mode statistics against closed forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26_generative_vision.metrics.distances import frechet_distance, gaussian_mode_stats, wasserstein_empirical


def test_wasserstein_of_a_shift_is_the_shift() -> None:
    x = torch.randn(300, 1, generator=torch.Generator().manual_seed(0))
    assert wasserstein_empirical(x, x + 1.5) == pytest.approx(1.5)
    x2 = torch.randn(200, 2, generator=torch.Generator().manual_seed(1))
    shift = torch.tensor([0.3, -0.4])
    assert wasserstein_empirical(x2, x2 + shift) == pytest.approx(0.5, abs=1e-6)
    assert wasserstein_empirical(x2, x2.flip(0)) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="equal shapes"):
        wasserstein_empirical(x, x[:10])


def test_frechet_of_gaussians() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(200_000, 2))
    b = rng.normal(size=(200_000, 2)) * 2 + np.array([1.0, 0.0])
    # |Δμ|² + Σ (σa − σb)² = 1 + 2·(1 − 2)² = 3
    assert frechet_distance(a, b) == pytest.approx(3.0, abs=0.05)
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-6)


def test_mode_stats() -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(100_000, 2, generator=gen, dtype=torch.float64) * 0.5 + 4
    s = gaussian_mode_stats(x, torch.tensor([4.0, 4.0]), std=0.5)
    assert s["mode_shift"] < 0.01 and s["spread_ratio"] == pytest.approx(1.0, abs=0.01)
    assert s["outside_mass"] == pytest.approx(0.01, abs=0.002)
    far = gaussian_mode_stats(x + 3, torch.tensor([4.0, 4.0]), std=0.5)
    assert far["outside_mass"] > 0.99 and far["mode_shift"] == pytest.approx(np.sqrt(18), abs=0.01)
