"""Edge homophily: the fraction of edges whose two ends share a label."""

from __future__ import annotations

import torch

__all__ = ["edge_homophily"]


def edge_homophily(edge_index: torch.Tensor, labels: torch.Tensor) -> float:
    """``h = |{(i, j) ∈ E : y_i = y_j}| / |E|`` over the given edges (self-loops excluded).

    Args:
        edge_index: ``LongTensor [2, E]``.
        labels: ``LongTensor [n]``.

    Returns:
        The edge homophily in ``[0, 1]``; NaN when there is no edge between distinct nodes.
    """
    src, dst = edge_index[0], edge_index[1]
    keep = src != dst
    if not bool(keep.any()):
        return float("nan")
    return float((labels[src[keep]] == labels[dst[keep]]).double().mean())
