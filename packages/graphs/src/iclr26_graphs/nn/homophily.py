r"""FGL's homophily estimator: local attention trained to explain each node's (pseudo-)label.

.. math::  \alpha_{i \to j} = \operatorname{softmax}_{j \in N(i)} \big( Q_i K_j^\top / \sqrt c \big),
           \qquad Q = X W_Q,\; K = X W_K,

and the edge score :math:`s(e_{ij}) = (\alpha_{i \to j} + \alpha_{j \to i}) / 2` weights the spanning-tree
distribution. The paper trains it with cross-entropy against the pseudo-label targets ``Y'`` (its
"two-stage" estimator: pseudo-labels first, attention second). We make that concrete [inferred]: node
``i`` predicts its class as the attention-weighted mix of its neighbours' targets,
``p_i = Σ_j α_{i→j} Y'_j``, and the loss is ``−Σ_i Σ_c Y'_{ic} log p_{ic}``; attention therefore learns to
put its mass on neighbours of the same class, i.e. on homophilous edges.

Arcs follow PyG's convention: ``edge_index[0]`` is the source ``j``, ``edge_index[1]`` the target ``i``
that attends to it; the returned ``α[e] = α_{i→j}`` is normalised over the arcs sharing a target.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["HomophilyEstimator", "scatter_softmax"]


def scatter_softmax(logits: torch.Tensor, index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Softmax of ``logits [E]`` within the groups given by ``index [E]`` (numerically stable)."""
    peak = torch.full((num_nodes,), -torch.inf, dtype=logits.dtype, device=logits.device)
    peak = peak.scatter_reduce(0, index, logits.detach(), reduce="amax", include_self=True)
    e = torch.exp(logits - peak[index])
    total = torch.zeros(num_nodes, dtype=logits.dtype, device=logits.device).index_add(0, index, e)
    return e / total[index]


class HomophilyEstimator(nn.Module):
    """Attention ``α_{i→j}`` on the arcs of a graph, trained to predict labels from neighbours.

    Args:
        in_channels: Feature size ``f``.
        channels: ``c``, the size of ``Q`` and ``K``.
    """

    def __init__(self, in_channels: int, channels: int = 32) -> None:
        super().__init__()
        self.channels = channels
        self.lin_q = nn.Linear(in_channels, channels, bias=False)
        self.lin_k = nn.Linear(in_channels, channels, bias=False)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """``α [E]`` for ``x [n, f]``, ``edge_index [2, E]`` (source, target)."""
        src, dst = edge_index[0], edge_index[1]
        q, k = self.lin_q(x), self.lin_k(x)
        logits = (q[dst] * k[src]).sum(-1) / math.sqrt(self.channels)
        return scatter_softmax(logits, dst, x.size(0))

    @staticmethod
    def predict(alpha: torch.Tensor, edge_index: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``p_i = Σ_j α_{i→j} Y'_j``: ``[n, C]``."""
        msg = alpha[:, None] * targets[edge_index[0]]
        return torch.zeros_like(targets).index_add(0, edge_index[1], msg)

    def fit(
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        targets: torch.Tensor,
        *,
        epochs: int = 200,
        lr: float = 0.01,
        weight_decay: float = 5e-4,
    ) -> list[float]:
        """Train on soft targets ``Y' [n, C]`` (rows summing to 1); returns the loss per epoch."""
        opt = torch.optim.Adam(self.parameters(), lr=lr, weight_decay=weight_decay)
        has_nb = torch.bincount(edge_index[1], minlength=x.size(0)) > 0
        losses = []
        self.train()
        for _ in range(epochs):
            opt.zero_grad()
            p = self.predict(self(x, edge_index), edge_index, targets)
            loss = -(targets * torch.log(p.clamp(min=1e-9))).sum(-1)[has_nb].mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        self.eval()
        return losses
