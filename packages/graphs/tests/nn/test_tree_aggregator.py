"""The two-pass tree aggregator equals the dense all-pairs path-product sum (outputs and gradients)."""

from __future__ import annotations

import pytest
import torch

from iclr26_graphs import TreeAggregator
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.nn import naive_tree_aggregate
from iclr26_graphs.ops import sample_spanning_forests
from iclr26_shared.testing import assert_close


def _forest(n: int, m: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, m), generator=gen)
    ei = ei[:, ei[0] != ei[1]]
    return sample_spanning_forests(ei, None, n, 1, gen)[0]


@pytest.mark.parametrize(("n", "m", "seed"), [(2, 1, 0), (25, 80, 1), (60, 200, 2), (40, 30, 3)])
def test_two_pass_equals_naive_outputs_and_gradients(n: int, m: int, seed: int) -> None:
    torch.manual_seed(seed)
    tree = _forest(n, m, seed)  # (40, 30) has several components
    agg = TreeAggregator(5, 4, bias=True).double()
    x = torch.randn(n, 5, dtype=torch.float64, requires_grad=True)
    wf = torch.rand(tree.size(1), dtype=torch.float64, requires_grad=True)
    wb = torch.rand(tree.size(1), dtype=torch.float64, requires_grad=True)
    fast = agg(x, tree, wf, wb)
    slow = naive_tree_aggregate(x, tree, agg.lin_a.weight, agg.lin_b.weight, wf, wb, agg.lin_b.bias)
    assert_close(fast, slow)
    g = torch.randn_like(fast)
    params = [x, wf, wb, agg.lin_a.weight, agg.lin_b.weight, agg.lin_b.bias]
    gf = torch.autograd.grad(fast, params, g)
    gs = torch.autograd.grad(slow, params, g)
    for a, b in zip(gf, gs, strict=True):
        assert_close(a, b)


def test_three_node_path_by_hand() -> None:
    """Scalars: H'_0 = b (x0 + α_{1→0} a x1 + α_{2→1} α_{1→0} a² x2)."""
    agg = TreeAggregator(1, 1).double()
    a, b = 0.7, 2.0
    with torch.no_grad():
        agg.lin_a.weight.fill_(a)
        agg.lin_b.weight.fill_(b)
    x = torch.tensor([[1.0], [10.0], [100.0]], dtype=torch.float64)
    tree = torch.tensor([[0, 1], [1, 2]])  # edges 0-1, 1-2
    wf = torch.tensor([0.5, 0.25], dtype=torch.float64)  # α_{0→1}, α_{1→2}
    wb = torch.tensor([0.3, 0.2], dtype=torch.float64)  # α_{1→0}, α_{2→1}
    out = agg(x, tree, wf, wb)
    expected0 = b * (1.0 + 0.3 * a * 10.0 + 0.2 * 0.3 * a * a * 100.0)
    expected2 = b * (100.0 + 0.25 * a * 10.0 + 0.25 * 0.5 * a * a * 1.0)
    assert out[0, 0].item() == pytest.approx(expected0)
    assert out[2, 0].item() == pytest.approx(expected2)


def test_permutation_equivariance() -> None:
    torch.manual_seed(0)
    n = 30
    tree = _forest(n, 90, 5)
    agg = TreeAggregator(3, 3).double()
    x = torch.randn(n, 3, dtype=torch.float64)
    w = torch.rand(tree.size(1), dtype=torch.float64)
    perm = torch.randperm(n)
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(n)
    out = agg(x, tree, w)
    out_p = agg(x[perm], inv[tree], w)
    assert_close(out_p, out[perm])


def test_bad_weights_and_features() -> None:
    agg = TreeAggregator(2, 2)
    tree = torch.tensor([[0], [1]])
    with pytest.raises(GraphInputError, match="w_fwd"):
        agg(torch.randn(2, 2), tree, torch.ones(3))
    with pytest.raises(GraphInputError, match=r"\[n, d_in\]"):
        agg(torch.randn(2), tree)
