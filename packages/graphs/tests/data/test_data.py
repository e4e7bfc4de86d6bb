"""Data: cSBM homophily follows φ, connectomes load with their real labels, splits, unknown names."""

from __future__ import annotations

import pytest
import torch

from iclr26_graphs.data import (
    CsbmParams,
    csbm_expected_homophily,
    graph_tensors,
    load_graph,
    make_split,
    sample_csbm,
)
from iclr26_graphs.errors import GraphInputError
from iclr26_shared.errors import DataError


@pytest.mark.parametrize("phi", [-0.75, 0.0, 0.5])
def test_csbm_homophily_and_shapes(phi: float) -> None:
    p = CsbmParams(2000, 800, phi=phi)
    x, ei, y = sample_csbm(p, torch.Generator().manual_seed(0))
    assert x.shape == (2000, 800) and y.shape == (2000,) and int(y.sum()) == 1000
    h = float((y[ei[0]] == y[ei[1]]).float().mean())
    assert abs(h - csbm_expected_homophily(p)) < 0.03
    deg = ei.size(1) / 2000
    assert abs(deg - 5.0) < 0.5
    # the features carry the class signal along ±u when μ > 0
    if abs(phi) < 0.1:  # features carry the whole signal only near φ = 0
        proj = x @ torch.linalg.svd(x - x.mean(0), full_matrices=False).Vh[0]
        acc = float(((proj > proj.median()).long() == y).float().mean())
        assert max(acc, 1 - acc) > 0.6


def test_csbm_parameter_identity_and_errors() -> None:
    p = CsbmParams(100, 40, epsilon=3.25, phi=0.3)
    assert p.lam**2 + p.mu**2 / p.xi == pytest.approx(1 + p.epsilon)
    with pytest.raises(GraphInputError, match="phi"):
        CsbmParams(phi=1.5)
    with pytest.raises(GraphInputError, match="λ"):
        CsbmParams(epsilon=10.0, avg_degree=2.0, phi=1.0)


def test_csbm_is_seeded() -> None:
    a = graph_tensors(load_graph("csbm", seed=3, csbm=CsbmParams(100, 40)))
    b = graph_tensors(load_graph("csbm", seed=3, csbm=CsbmParams(100, 40)))
    assert torch.equal(a.edge_index, b.edge_index) and torch.equal(a.x, b.x)


@pytest.mark.parametrize(("name", "n", "classes"), [("drosophila-left", 209, 4), ("mouse-dti", 332, 7)])
def test_real_connectomes(name: str, n: int, classes: int) -> None:
    d = load_graph(name)
    g = graph_tensors(d)
    assert d.num_nodes == n and d.num_classes == classes
    assert torch.isfinite(g.x).all() and g.edge_index.max() < n
    assert not bool((g.edge_index[0] == g.edge_index[1]).any())
    assert 0.0 < d.homophily < 1.0
    masks = d.train_mask.long() + d.val_mask.long() + d.test_mask.long()
    assert bool((masks == 1).all())


def test_split_is_disjoint_and_capped() -> None:
    y = torch.tensor([0] * 50 + [1] * 5)
    tr, va, te = make_split(y, 20, 10, torch.Generator().manual_seed(0))
    assert int((tr & va).sum()) == 0 and int(tr[y == 1].sum()) == 2 and int(te[y == 1].sum()) >= 2


def test_unknown_graph() -> None:
    with pytest.raises(DataError, match="unknown graph"):
        load_graph("no-such-graph")
