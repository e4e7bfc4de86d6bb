"""Rooting at centroids: shallow trees, consistent levels, forests with several components."""

from __future__ import annotations

import pytest
import torch

from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.ops import build_tree_schedule, sample_spanning_tree


def _random_tree(n: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, 3 * n), generator=gen)
    ei = torch.cat([ei, torch.stack([torch.arange(n - 1), torch.arange(1, n)])], 1)  # connected
    return sample_spanning_tree(ei, None, n, gen)


def test_path_is_rooted_at_its_middle() -> None:
    n = 9
    path = torch.stack([torch.arange(n - 1), torch.arange(1, n)])
    s = build_tree_schedule(path, n)
    assert s.roots.tolist() == [4]
    assert s.depth == 4


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_levels_parents_and_centroid(seed: int) -> None:
    n = 80
    t = _random_tree(n, seed)
    s = build_tree_schedule(t, n)
    level = torch.empty(n, dtype=torch.long)
    for i in range(s.depth + 1):
        level[s.level(i)] = i
    nonroot = s.parent >= 0
    assert torch.equal(level[s.parent[nonroot]], level[nonroot] - 1)
    assert sorted(s.order.tolist()) == list(range(n))
    # centroid: removing the root leaves parts of size <= n / 2
    size = torch.ones(n, dtype=torch.long)
    for i in range(s.depth, 0, -1):
        lev = s.level(i)
        size.index_add_(0, s.parent[lev], size[lev])
    root = int(s.roots[0])
    children = (s.parent == root).nonzero().flatten()
    assert int(size[children].max()) <= n // 2
    # edge ids point at the edge joining each node to its parent
    e = s.edge_id[nonroot]
    ends = torch.stack([t[0, e], t[1, e]])
    v = torch.arange(n)[nonroot]
    assert bool(
        (((ends[0] == v) & (ends[1] == s.parent[nonroot])) | ((ends[1] == v) & (ends[0] == s.parent[nonroot]))).all()
    )


def test_forest_with_isolated_nodes() -> None:
    edges = torch.tensor([[0, 1, 4], [1, 2, 5]])
    s = build_tree_schedule(edges, 7)
    assert sorted(s.roots.tolist()) == [1, 3, 4, 6]


def test_cycle_is_rejected() -> None:
    with pytest.raises(GraphInputError, match="cycle"):
        build_tree_schedule(torch.tensor([[0, 1, 2], [1, 2, 0]]), 3)
