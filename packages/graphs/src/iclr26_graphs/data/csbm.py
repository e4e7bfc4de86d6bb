r"""The contextual stochastic block model (cSBM) of Deshpande et al. (2018) as used by Chien et al. (2021).

Two balanced classes ``v_i ∈ {−1, +1}``; an edge joins two nodes of the same class with probability
``c_in / n`` and of different classes with ``c_out / n``, where

.. math::  c_{in} = d + \lambda \sqrt d, \qquad c_{out} = d - \lambda \sqrt d ;

features are a Gaussian mixture :math:`b_i = \sqrt{\mu / n}\, v_i u + Z_i / \sqrt f`, with
:math:`u \sim \mathcal N(0, I_f / f)` and :math:`Z_i \sim \mathcal N(0, I_f)`. With ``ξ = n / f``
the signal is split between graph and features by the angle ``φ`` at a fixed total ``1 + ε``:

.. math::  \lambda = \sqrt{1 + \varepsilon}\, \sin(\pi\varphi / 2), \qquad
           \mu = \sqrt{\xi}\, \sqrt{1 + \varepsilon}\, \cos(\pi\varphi / 2),

so ``λ² + μ²/ξ = 1 + ε`` and ``φ = (2/π) arctan(λ √ξ / μ)``. ``φ = 1``: homophilous graph only;
``φ = −1``: heterophilous graph only; ``φ = 0``: features only. The expected edge homophily is
``c_in / (c_in + c_out) = 1/2 + λ / (2 √d)``. Chien et al. use ``n = 5000, f = 2000, d = 5, ε = 3.25``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from iclr26_graphs.errors import GraphInputError

__all__ = ["CsbmParams", "csbm_expected_homophily", "sample_csbm"]


@dataclass(frozen=True)
class CsbmParams:
    """Parameters of a cSBM graph.

    Attributes:
        num_nodes: ``n`` (even).
        num_features: ``f``.
        avg_degree: ``d`` (expected degree).
        epsilon: ``ε``: total signal above the detection threshold.
        phi: ``φ ∈ [−1, 1]``: the balance of graph (|φ| → 1) and feature (φ → 0) signal; its sign is the
            graph's homophily (> 0) or heterophily (< 0).
    """

    num_nodes: int = 5000
    num_features: int = 2000
    avg_degree: float = 5.0
    epsilon: float = 3.25
    phi: float = 0.0

    def __post_init__(self) -> None:
        if self.num_nodes < 4 or self.num_nodes % 2:
            raise GraphInputError(f"cSBM num_nodes = {self.num_nodes}: expected an even number >= 4")
        if self.num_features < 1:
            raise GraphInputError(f"cSBM num_features = {self.num_features}: expected >= 1")
        if not -1.0 <= self.phi <= 1.0:
            raise GraphInputError(f"cSBM phi = {self.phi}: expected a number in [-1, 1]")
        if self.epsilon < 0 or self.avg_degree <= 0:
            raise GraphInputError("cSBM epsilon must be >= 0 and avg_degree > 0")
        if abs(self.lam) > math.sqrt(self.avg_degree):
            raise GraphInputError(
                f"cSBM |λ| = {abs(self.lam):.3f} exceeds √d = {math.sqrt(self.avg_degree):.3f} "
                "(edge probabilities would be negative): lower epsilon or raise avg_degree"
            )

    @property
    def xi(self) -> float:
        """``ξ = n / f``."""
        return self.num_nodes / self.num_features

    @property
    def lam(self) -> float:
        """``λ = √(1+ε) sin(πφ/2)``."""
        return math.sqrt(1 + self.epsilon) * math.sin(math.pi * self.phi / 2)

    @property
    def mu(self) -> float:
        """``μ = √ξ √(1+ε) cos(πφ/2)``."""
        return math.sqrt(self.xi) * math.sqrt(1 + self.epsilon) * math.cos(math.pi * self.phi / 2)


def csbm_expected_homophily(params: CsbmParams) -> float:
    """``c_in / (c_in + c_out) = 1/2 + λ / (2√d)``."""
    return 0.5 + params.lam / (2 * math.sqrt(params.avg_degree))


def sample_csbm(params: CsbmParams, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw one cSBM graph.

    Returns:
        ``x`` ``float32 [n, f]``, ``edge_index`` ``LongTensor [2, 2M]`` (both directions, no self-loops,
        no repeats), ``y`` ``LongTensor [n]`` in ``{0, 1}`` (class ``v = 2y − 1``).
    """
    n, f, d = params.num_nodes, params.num_features, params.avg_degree
    y = torch.zeros(n, dtype=torch.long)
    y[torch.randperm(n, generator=generator)[: n // 2]] = 1
    v = (2 * y - 1).double()
    c_in = d + params.lam * math.sqrt(d)
    c_out = d - params.lam * math.sqrt(d)
    members = [(y == c).nonzero().flatten() for c in (0, 1)]
    half = n // 2
    pieces = []
    # same-class pairs: 2 * C(n/2, 2) pairs with probability c_in / n; cross pairs: (n/2)^2 with c_out / n
    for count, prob, cross in ((2 * half * (half - 1) // 2, c_in / n, False), (half * half, c_out / n, True)):
        m = int(torch.binomial(torch.tensor(float(count)), torch.tensor(min(max(prob, 0.0), 1.0)), generator=generator))
        if m == 0:
            continue
        a_cls = torch.randint(0, 2, (m,), generator=generator)
        b_cls = 1 - a_cls if cross else a_cls
        a = torch.stack(members)[a_cls, torch.randint(0, half, (m,), generator=generator)]
        b = torch.stack(members)[b_cls, torch.randint(0, half, (m,), generator=generator)]
        pieces.append(torch.stack([a, b]))
    if pieces:
        e = torch.cat(pieces, 1)
        e = e[:, e[0] != e[1]]
        key = torch.unique(torch.minimum(e[0], e[1]) * n + torch.maximum(e[0], e[1]))
        lo, hi = key // n, key % n
        edge_index = torch.cat([torch.stack([lo, hi]), torch.stack([hi, lo])], 1)
    else:
        edge_index = torch.empty(2, 0, dtype=torch.long)
    u = torch.randn(f, generator=generator, dtype=torch.float64) / math.sqrt(f)
    z = torch.randn(n, f, generator=generator, dtype=torch.float64)
    x = math.sqrt(params.mu / n) * v[:, None] * u[None, :] + z / math.sqrt(f)
    return x.float(), edge_index, y
