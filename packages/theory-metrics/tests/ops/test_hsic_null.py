"""The moment-matched (Gamma) null of the split-half distribution against the shuffles it replaces (issue 38)."""

from __future__ import annotations

import pytest
import torch

from iclr26_theory_metrics.ops.hsic import HSICInputError, split_half_dependence, split_half_mean
from iclr26_theory_metrics.ops.hsic_null import split_half_gamma, split_half_moments

SHUFFLES = 3000


def _features(kind: str, m: int = 200) -> torch.Tensor:
    g = torch.Generator().manual_seed(3)
    if kind == "gauss":
        return torch.randn(m, 32, generator=g, dtype=torch.float64)
    if kind == "clusters":  # class codes + noise: a lumpy Gram, the hard case for a two-moment fit
        code = torch.randn(10, 32, generator=g, dtype=torch.float64)
        return code[torch.arange(m) % 10] + 0.5 * torch.randn(m, 32, generator=g, dtype=torch.float64)
    w = torch.randn(64, 128, generator=g, dtype=torch.float64) / 8  # "relu": penultimate-like features
    return torch.relu(torch.randn(m, 64, generator=g, dtype=torch.float64) @ w)


@pytest.mark.parametrize("kind", ["gauss", "clusters", "relu"])
def test_moments_match_the_shuffles(kind: str) -> None:
    f = _features(kind)
    h = split_half_dependence(f, None, SHUFFLES, generator=torch.Generator().manual_seed(1))
    mean, var = split_half_moments(f, None, generator=torch.Generator().manual_seed(1))
    # the mean is the exact permutation mean: equal to the closed form, and to the shuffles within 4 standard errors
    assert mean == pytest.approx(split_half_mean(f, None, generator=torch.Generator().manual_seed(1)), rel=1e-12)
    assert abs(float(h.mean()) - mean) < 4 * float(h.std()) / SHUFFLES**0.5
    # Gretton et al.'s null variance: asymptotic, within 25 % of the shuffles' at n = 100 per half
    assert 0.75 < float(h.var()) / var < 1.25
    # the Gamma's quantiles follow the shuffles' to within 0.35 of their standard deviation
    q = (torch.arange(50, dtype=torch.float64) + 0.5) / 50
    gq = split_half_gamma(f, None, 50, generator=torch.Generator().manual_seed(1))
    assert float((gq - torch.quantile(h, q)).abs().max()) < 0.35 * float(h.std())
    assert bool((gq[1:] >= gq[:-1]).all())


def test_gamma_null_bad_input_names_the_argument() -> None:
    with pytest.raises(HSICInputError, match="subset"):
        split_half_moments(torch.randn(12, 3, dtype=torch.float64))
    with pytest.raises(HSICInputError, match="n_points"):
        split_half_gamma(torch.randn(40, 3, dtype=torch.float64), n_points=0)
    with pytest.raises(HSICInputError, match="degenerate"):
        split_half_gamma(torch.ones(40, 3, dtype=torch.float64))
