"""Wilson's sampler: exact product-of-weights distribution (chi-square), spanning forests, bad input."""

from __future__ import annotations

import itertools

import pytest
import torch

from iclr26_graphs import sample_spanning_tree
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.ops import connected_components, is_spanning_forest, sample_spanning_forests
from iclr26_graphs.ops.spanning_tree import Sampler, SamplerStalledError, bridge_orientation, undirected_edges

K4 = torch.tensor([[0, 0, 0, 1, 1, 2], [1, 2, 3, 2, 3, 3]])
C4 = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])


def _spanning_trees(edges: torch.Tensor, n: int) -> list[frozenset[int]]:
    """All spanning trees by brute force, as sets of edge columns."""
    out = []
    for combo in itertools.combinations(range(edges.size(1)), n - 1):
        sub = edges[:, list(combo)]
        if is_spanning_forest(sub, edges, n):
            out.append(frozenset(combo))
    return out


def _chi2_pvalue(counts: torch.Tensor, probs: torch.Tensor) -> float:
    expected = probs * counts.sum()
    stat = float(((counts - expected) ** 2 / expected).sum())
    dof = counts.numel() - 1
    # P(chi2_dof > stat) = Q(dof / 2, stat / 2), the regularised upper incomplete gamma
    return float(torch.special.gammaincc(torch.tensor(dof / 2, dtype=torch.float64), torch.tensor(stat / 2)))


def _tree_counts(
    edges: torch.Tensor, weight: torch.Tensor | None, n: int, draws: int, sampler: str, max_rounds: int | None = None
) -> tuple:
    trees = _spanning_trees(edges, n)
    index = {t: i for i, t in enumerate(trees)}
    key = {(min(a, b), max(a, b)): j for j, (a, b) in enumerate(edges.t().tolist())}
    gen = torch.Generator().manual_seed(1234)
    if sampler == "cycle-popping":
        samples = sample_spanning_forests(edges, weight, n, draws, gen, max_rounds=max_rounds)
    else:
        samples = sample_spanning_forests(edges, weight, n, draws, gen, sampler="wilson", max_rounds=max_rounds)
    counts = torch.zeros(len(trees), dtype=torch.float64)
    for t in samples:
        cols = frozenset(key[(min(a, b), max(a, b))] for a, b in t.t().tolist())
        counts[index[cols]] += 1
    w = torch.ones(edges.size(1), dtype=torch.float64) if weight is None else weight.double()
    probs = torch.tensor([float(torch.prod(w[list(t)])) for t in trees], dtype=torch.float64)
    return counts, probs / probs.sum(), trees


@pytest.mark.parametrize("sampler", ["cycle-popping", "wilson"])
def test_k4_uniform_matches_enumeration(sampler: Sampler) -> None:
    counts, probs, trees = _tree_counts(K4, None, 4, 2400, sampler)
    assert len(trees) == 16  # Cayley: 4^(4-2)
    assert _chi2_pvalue(counts, probs) > 1e-3


@pytest.mark.parametrize("sampler", ["cycle-popping", "wilson"])
def test_weighted_k4_and_cycle_match_product_of_weights(sampler: Sampler) -> None:
    w = torch.tensor([1.0, 2.0, 3.0, 0.5, 4.0, 1.5])
    counts, probs, _ = _tree_counts(K4, w, 4, 2500, sampler)
    assert _chi2_pvalue(counts, probs) > 1e-3
    wc = torch.tensor([1.0, 4.0, 2.0, 8.0])
    counts, probs, trees = _tree_counts(C4, wc, 4, 3000, sampler)
    assert len(trees) == 4
    assert _chi2_pvalue(counts, probs) > 1e-3


def test_chi_square_has_power_against_the_uniform_distribution() -> None:
    """The same test rejects when the weights are ignored: it can fail."""
    w = torch.tensor([1.0, 4.0, 2.0, 8.0])
    counts, _, trees = _tree_counts(C4, w, 4, 3000, "cycle-popping")
    uniform = torch.full((len(trees),), 1 / len(trees), dtype=torch.float64)
    assert _chi2_pvalue(counts, uniform) < 1e-6


# Two triangles joined by the bridge {2, 3}, and a pendant leaf 6 on node 5 (bridge {5, 6}): 9 trees.
BRIDGED = torch.tensor([[0, 1, 2, 2, 3, 4, 5, 5], [1, 2, 0, 3, 4, 5, 3, 6]])


@pytest.mark.parametrize("sampler", ["cycle-popping", "wilson"])
def test_tiny_bridge_weights_do_not_stall_and_keep_the_law(sampler: Sampler) -> None:
    """Issue 16: a pendant part hanging on a bridge of (floored) weight 1e-6 stalled the walk.

    The old sampler needed ~10⁶ popping rounds here (the walk escapes the far triangle with probability
    ~1e-6 per round); ``max_rounds=200`` keeps this test from hanging if that comes back. The law must
    still be ``∝ Π w(e)`` over the 9 spanning trees, whatever the bridges' weights.
    """
    w = torch.tensor([1.0, 4.0, 2.0, 1e-6, 0.5, 3.0, 1.0, 1e-6])
    counts, probs, trees = _tree_counts(BRIDGED, w, 7, 1800, sampler, max_rounds=200)
    assert len(trees) == 9
    assert _chi2_pvalue(counts, probs) > 1e-3
    # the smoke-graph pattern: node 3's only other neighbour is the leaf 4, with weight ~1
    pendant = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 3, 4]])
    pw = torch.tensor([1.0, 1.0, 1.0, 1e-6, 1.0])
    for t in sample_spanning_forests(pendant, pw, 5, 20, torch.Generator().manual_seed(0), max_rounds=200):
        assert is_spanning_forest(t, pendant, 5)


@pytest.mark.parametrize("sampler", ["cycle-popping", "wilson"])
def test_ill_conditioned_cut_raises_a_clear_error_instead_of_looping(sampler: Sampler) -> None:
    """Two triangles joined by two edges of weight 1e-12 (no bridge): the guard must stop the walk."""
    ei = torch.tensor([[0, 1, 2, 3, 4, 5, 0, 2], [1, 2, 0, 4, 5, 3, 3, 5]])
    w = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1e-12, 1e-12])
    with pytest.raises(SamplerStalledError, match="max_rounds"):
        sample_spanning_forests(ei, w, 6, 2, torch.Generator().manual_seed(0), sampler=sampler, max_rounds=50)
    with pytest.raises(GraphInputError, match="max_rounds"):
        sample_spanning_forests(ei, w, 6, 2, max_rounds=0)


def test_bridge_orientation_matches_brute_force() -> None:
    gen = torch.Generator().manual_seed(5)
    for n in (2, 9, 40):
        ei = torch.randint(0, n, (2, n + n // 3), generator=gen)
        if not bool((ei[0] != ei[1]).any()):
            continue
        pairs, _ = undirected_edges(ei, None, n)
        comp = connected_components(pairs, n)
        roots = (comp == torch.arange(n)).nonzero().flatten()
        got = bridge_orientation(pairs, n, roots)
        found = {(a, b) for a, b in got.t().tolist()}
        expect = set()
        for j in range(pairs.size(1)):
            rest = torch.cat([pairs[:, :j], pairs[:, j + 1 :]], 1)
            split = connected_components(rest, n)
            a, b = pairs[:, j].tolist()
            if int(split[a]) != int(split[b]):
                root = int(comp[a])  # the far end is the one no longer connected to the component's root
                expect.add((b, a) if int(split[a]) == int(split[root]) else (a, b))
        assert found == expect


def test_both_directions_are_merged() -> None:
    both = torch.cat([C4, C4.flip(0)], 1)
    w = torch.tensor([1.0, 4.0, 2.0, 8.0])
    a = sample_spanning_forests(both, torch.cat([w, w]), 4, 50, torch.Generator().manual_seed(0))
    b = sample_spanning_forests(C4, w, 4, 50, torch.Generator().manual_seed(0))
    assert torch.equal(a, b)


@pytest.mark.parametrize("sampler", ["cycle-popping", "wilson"])
def test_output_is_a_spanning_forest(sampler: Sampler) -> None:
    gen = torch.Generator().manual_seed(0)
    for n in (1, 2, 7, 60):
        m = 2 * n
        ei = torch.randint(0, n, (2, m), generator=gen)
        ei = torch.cat([ei, torch.tensor([[0], [0]])], 1)  # a self-loop is ignored
        if not bool((ei[0] != ei[1]).any()):
            continue
        w = torch.rand(ei.size(1), generator=gen) + 0.1
        comps = int(torch.unique(connected_components(ei, n)).numel())
        trees = sample_spanning_forests(ei, w, n, 3, gen, sampler=sampler)
        assert trees.shape == (3, 2, n - comps)
        for t in trees:
            assert is_spanning_forest(t, ei, n)


def test_isolated_nodes_and_edge_free_graph() -> None:
    t = sample_spanning_tree(torch.tensor([[0], [1]]), None, 4)
    assert t.shape == (2, 1)
    assert sample_spanning_tree(torch.empty(2, 0, dtype=torch.long), None, 3).shape == (2, 0)


def test_generator_makes_it_reproducible() -> None:
    ei = torch.randint(0, 30, (2, 90), generator=torch.Generator().manual_seed(1))
    a = sample_spanning_tree(ei, None, 30, torch.Generator().manual_seed(7))
    b = sample_spanning_tree(ei, None, 30, torch.Generator().manual_seed(7))
    assert torch.equal(a, b)


def test_connected_components_matches_bfs() -> None:
    gen = torch.Generator().manual_seed(3)
    n = 50
    ei = torch.randint(0, n, (2, 35), generator=gen)
    label = connected_components(ei, n)
    adj: dict[int, set[int]] = {i: set() for i in range(n)}
    for a, b in ei.t().tolist():
        adj[a].add(b)
        adj[b].add(a)
    for s in range(n):
        seen, stack = {s}, [s]
        while stack:
            for v in adj[stack.pop()]:
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        assert int(label[s]) == min(seen)


@pytest.mark.parametrize(
    ("edge_index", "weight", "n", "match"),
    [
        (torch.tensor([[0, 1], [1, 5]]), None, 4, "outside"),
        (torch.tensor([[0, 1], [0, 1]]), None, 3, "only self-loops"),
        (torch.empty(2, 0, dtype=torch.long), None, 0, "empty"),
        (torch.tensor([[0], [1]]), torch.tensor([float("nan")]), 2, "finite"),
        (torch.tensor([[0], [1]]), torch.tensor([-1.0]), 2, "> 0"),
        (torch.tensor([[0], [1]]), torch.tensor([1.0, 2.0]), 2, "shape"),
        (torch.tensor([0, 1]), None, 2, r"\[2, E\]"),
        (torch.tensor([[0.0], [1.0]]), None, 2, "integers"),
    ],
)
def test_bad_input_gives_a_clear_error(edge_index, weight, n, match) -> None:
    with pytest.raises(GraphInputError, match=match):
        sample_spanning_tree(edge_index, weight, n)
