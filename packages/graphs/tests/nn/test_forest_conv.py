"""ForestConv: a PyG MessagePassing layer; equivariant given its forest; guided sampling follows weights."""

from __future__ import annotations

import pytest
import torch

from iclr26_graphs import ForestConv
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.nn.forest_conv import make_forest
from iclr26_graphs.ops import edge_homophily
from iclr26_shared.testing import assert_close


def _graph(n: int = 40, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, 3 * n), generator=gen)
    ei = ei[:, ei[0] != ei[1]]
    return torch.cat([ei, ei.flip(0)], 1)


def test_is_message_passing_and_shapes() -> None:
    from torch_geometric.nn import MessagePassing

    conv = ForestConv(6, 5, num_trees=3)
    assert isinstance(conv, MessagePassing)
    ei = _graph()
    out = conv(torch.randn(40, 6), ei)
    assert out.shape == (40, 5)
    # cached: the second call reuses the forest, so the output is identical
    x = torch.randn(40, 6)
    assert torch.equal(conv(x, ei), conv(x, ei))
    # row-normalised trees averaged: every row norm is at most 1
    norms = out.detach().norm(dim=-1)
    assert float(norms.max()) <= 1 + 1e-5, norms


def test_permutation_equivariance_with_its_forest() -> None:
    torch.manual_seed(0)
    n = 40
    ei = _graph(n)
    w = torch.rand(ei.size(1)) + 0.1
    conv = ForestConv(4, 4, num_trees=3, cached=False).double()
    forest = conv.sample_forest(ei, n, w, torch.Generator().manual_seed(1))
    x = torch.randn(n, 4, dtype=torch.float64)
    perm = torch.randperm(n)
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(n)
    ei_p = inv[ei]
    forest_p = make_forest(ei_p, n, inv[forest.trees])
    out = conv(x, ei, w.double(), forest=forest)
    out_p = conv(x[perm], ei_p, w.double(), forest=forest_p)
    assert_close(out_p, out[perm])


def test_guided_trees_prefer_heavy_edges() -> None:
    n = 60
    y = torch.arange(n) % 2
    ei = _graph(n, 3)
    w = torch.where(y[ei[0]] == y[ei[1]], 20.0, 1.0)
    guided = ForestConv(2, 2, num_trees=4, cached=False).sample_forest(ei, n, w, torch.Generator().manual_seed(0))
    uniform = ForestConv(2, 2, num_trees=4, cached=False).sample_forest(ei, n, None, torch.Generator().manual_seed(0))
    h_g = sum(edge_homophily(t, y) for t in guided.trees) / 4
    h_u = sum(edge_homophily(t, y) for t in uniform.trees) / 4
    assert h_g > h_u + 0.1


def test_bad_forest_is_rejected() -> None:
    conv = ForestConv(2, 2, num_trees=1)
    ei = _graph(10, 1)
    forest = conv.sample_forest(ei, 10)
    with pytest.raises(GraphInputError, match="rows"):
        conv(torch.randn(11, 2), ei, forest=forest)
    with pytest.raises(GraphInputError, match="not in edge_index"):
        make_forest(torch.tensor([[0], [1]]), 3, torch.tensor([[[0, 1], [2, 2]]]))


def _simple_symmetric(n: int, seed: int) -> torch.Tensor:
    ei = _graph(n, seed)
    key = torch.unique(torch.minimum(ei[0], ei[1]) * n + torch.maximum(ei[0], ei[1]))
    a, b = key // n, key % n
    return torch.cat([torch.stack([a, b]), torch.stack([b, a])], 1)


@pytest.mark.parametrize("normalize", [False, True])
def test_sender_direction_is_receiver_with_reversed_weights(normalize: bool) -> None:
    """``direction="sender"`` weights the message a → b by the weight stored on the arc (b, a)."""
    torch.manual_seed(0)
    n = 30
    ei = _simple_symmetric(n, 5)
    half = ei.size(1) // 2
    w = torch.rand(ei.size(1), dtype=torch.float64) + 0.1
    w_rev = torch.cat([w[half:], w[:half]])  # arc e of the first half reverses arc e of the second
    recv = ForestConv(4, 4, num_trees=2, normalize=normalize, cached=False).double()
    send = ForestConv(4, 4, num_trees=2, normalize=normalize, direction="sender", cached=False).double()
    send.load_state_dict(recv.state_dict())
    forest = recv.sample_forest(ei, n, w, torch.Generator().manual_seed(2))
    x = torch.randn(n, 4, dtype=torch.float64)
    assert_close(send(x, ei, w, forest=forest), recv(x, ei, w_rev, forest=forest))
    assert not torch.allclose(send(x, ei, w, forest=forest), recv(x, ei, w, forest=forest))


def test_unknown_direction_is_refused() -> None:
    with pytest.raises(GraphInputError, match="direction"):
        ForestConv(4, 4, direction="both")  # pyright: ignore[reportArgumentType]  # the bad value under test
