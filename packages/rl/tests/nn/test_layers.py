"""Layers: random shift vs its naive twin, schedule, truncated normal."""

from __future__ import annotations

import pytest
import torch

from iclr26_rl.nn import linear_schedule, naive_random_shift, random_shift, sample_shifts, truncated_normal_sample
from iclr26_shared.testing import assert_close


@pytest.mark.parametrize("shape", [(4, 6, 10, 10), (3, 5, 3, 8, 8)])
def test_random_shift_matches_naive(shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    x = torch.randn(shape, requires_grad=True)
    shifts = sample_shifts(shape[0], 2)
    fast, returned = random_shift(x, 2, shifts)
    assert torch.equal(returned, shifts)
    slow = naive_random_shift(x, 2, shifts)
    assert_close(fast, slow)
    g = torch.randn_like(fast)
    (gf,) = torch.autograd.grad(fast, x, g)
    (gs,) = torch.autograd.grad(slow, x, g)
    assert_close(gf, gs)


def test_random_shift_center_is_identity_and_edges_replicate() -> None:
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    same, _ = random_shift(x, 1, torch.tensor([[1, 1]]))
    assert torch.equal(same, x)
    up_left, _ = random_shift(x, 1, torch.tensor([[0, 0]]))
    assert up_left[0, 0, 0, 0] == x[0, 0, 0, 0] and up_left[0, 0, 1, 1] == x[0, 0, 0, 0]


def test_linear_schedule() -> None:
    assert linear_schedule(1.0, 0.1, 100, 0) == 1.0
    assert linear_schedule(1.0, 0.1, 100, 50) == pytest.approx(0.55)
    assert linear_schedule(1.0, 0.1, 100, 1000) == pytest.approx(0.1)


def test_truncated_normal_stays_inside_and_passes_gradients() -> None:
    torch.manual_seed(0)
    mu = torch.full((1000, 2), 0.95, requires_grad=True)
    x = truncated_normal_sample(mu, 1.0, clip=0.3)
    assert x.abs().max() < 1.0 and (x - mu).abs().max() <= 0.3 + 1e-6
    x.sum().backward()
    assert mu.grad is not None and torch.equal(mu.grad, torch.ones_like(mu))
