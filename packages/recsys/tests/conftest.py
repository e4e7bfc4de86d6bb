"""Shared fixtures: small seeded interaction matrices."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch


def random_interactions(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    """A seeded 0/1 user×item matrix in which every item has at least one interaction."""
    rng = np.random.default_rng(seed)
    X = (rng.random((m, n)) < density).astype(np.float64)
    X[rng.integers(0, m, size=n), np.arange(n)] = 1.0
    return sp.csr_matrix(X)


@pytest.fixture
def small_X() -> sp.csr_matrix:
    return random_interactions(80, 12, 0.25, seed=0)


@pytest.fixture
def small_G(small_X: sp.csr_matrix) -> torch.Tensor:
    return torch.from_numpy((small_X.T @ small_X).toarray())
