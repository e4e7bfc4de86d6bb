r"""Weighted random spanning trees (forests) by Wilson's algorithm.

FGL (Li et al., ICLR 2026: the tree distribution and Theorem 2) samples spanning trees of the augmented
graph :math:`\hat G` from

.. math::  P_{\hat G}(T) = \frac{\prod_{e \in T} s(e)}{\sum_{T' \subseteq \hat G} \prod_{e \in T'} s(e)},

the product-of-weights distribution. Wilson's algorithm gives exactly this distribution: from a root
``r``, loop-erased random walks whose steps go from ``u`` to a neighbour ``v`` with probability
:math:`s(u, v) / \sum_w s(u, w)` are added one after the other until every node hangs on the tree.

Two implementations of the same algorithm are provided:

* ``"cycle-popping"`` (default): Wilson's cycle-popping formulation (Propp & Wilson 1998; Wilson 1996,
  Thm. 1). Every non-root node draws a successor with the walk's transition probabilities; any cycle
  of the successor graph is *popped* (its nodes draw again) until none is left; the successor pointers
  are then the tree. The popped cycles do not depend on the order of popping and the cycles of a
  functional graph are node-disjoint, so popping all of them at once per round is exact. Each round is
  a handful of tensor operations (successor sampling by ``searchsorted`` on cumulative weights, cycle
  detection by pointer doubling), so it runs on CPU or CUDA and samples many trees at once.
* ``"wilson"``: the textbook sequential loop-erased random walk in Python/NumPy; the test reference.

Several connected components give a spanning forest (one root per component, its smallest node).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch

from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.ops.components import connected_components

Sampler = Literal["cycle-popping", "wilson"]

__all__ = [
    "Sampler",
    "is_spanning_forest",
    "sample_spanning_forests",
    "sample_spanning_tree",
    "undirected_edges",
]


def _check_graph(edge_index: torch.Tensor, edge_weight: torch.Tensor | None, num_nodes: int) -> None:
    if not isinstance(num_nodes, int) or isinstance(num_nodes, bool) or num_nodes <= 0:
        raise GraphInputError(f"num_nodes = {num_nodes!r}: the graph is empty; expected a positive integer")
    if not isinstance(edge_index, torch.Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        shape = tuple(edge_index.shape) if isinstance(edge_index, torch.Tensor) else type(edge_index).__name__
        raise GraphInputError(f"edge_index must be a LongTensor [2, E], got {shape}")
    if edge_index.dtype not in (torch.int64, torch.int32):
        raise GraphInputError(f"edge_index must hold integers, got dtype {edge_index.dtype}")
    if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= num_nodes):
        raise GraphInputError(
            f"edge_index holds node ids in [{int(edge_index.min())}, {int(edge_index.max())}], "
            f"outside [0, num_nodes = {num_nodes})"
        )
    if edge_weight is not None:
        if edge_weight.shape != (edge_index.size(1),):
            raise GraphInputError(
                f"edge_weight must have shape [E] = [{edge_index.size(1)}], got {tuple(edge_weight.shape)}"
            )
        if not bool(torch.isfinite(edge_weight).all()) or bool((edge_weight <= 0).any()):
            raise GraphInputError("edge_weight must be finite and > 0 (a tree's probability is a product of weights)")


def undirected_edges(
    edge_index: torch.Tensor, edge_weight: torch.Tensor | None, num_nodes: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The simple undirected graph behind ``edge_index``: each unordered pair once, self-loops dropped.

    Entries of the same unordered pair (both directions, or repeats) are merged by averaging their
    weights, so a PyG-style symmetric ``edge_index`` with weights ``w(i, j) = w(j, i)`` keeps ``w``, and
    FGL's directed attentions give its score ``s(e_ij) = (α_{i→j} + α_{j→i}) / 2``.

    Returns:
        ``pairs`` ``LongTensor [2, M]`` with ``pairs[0] < pairs[1]`` (sorted), ``weight`` ``float64 [M]``.
    """
    _check_graph(edge_index, edge_weight, num_nodes)
    edge_index = edge_index.long()
    src, dst = edge_index[0], edge_index[1]
    keep = src != dst
    if edge_index.size(1) > 0 and not bool(keep.any()):
        raise GraphInputError("edge_index holds only self-loops: a spanning tree has no edge to choose from")
    lo = torch.minimum(src, dst)[keep]
    hi = torch.maximum(src, dst)[keep]
    w = (
        torch.ones(lo.numel(), dtype=torch.float64, device=edge_index.device)
        if edge_weight is None
        else edge_weight[keep].double()
    )
    key, inv = torch.unique(lo * num_nodes + hi, return_inverse=True)
    total = torch.zeros(key.numel(), dtype=torch.float64, device=w.device).index_add_(0, inv, w)
    count = torch.zeros(key.numel(), dtype=torch.float64, device=w.device).index_add_(0, inv, torch.ones_like(w))
    return torch.stack([key // num_nodes, key % num_nodes]), total / count


class _Csr:
    """Symmetric adjacency in CSR form with cumulative weights for O(log deg) neighbour sampling."""

    def __init__(self, pairs: torch.Tensor, weight: torch.Tensor, num_nodes: int) -> None:
        src = torch.cat([pairs[0], pairs[1]])
        dst = torch.cat([pairs[1], pairs[0]])
        w = torch.cat([weight, weight])
        order = torch.argsort(src * num_nodes + dst)
        self.col = dst[order]
        deg = torch.bincount(src, minlength=num_nodes)
        self.ptr = torch.zeros(num_nodes + 1, dtype=torch.long, device=pairs.device)
        self.ptr[1:] = torch.cumsum(deg, 0)
        self.cum = torch.cumsum(w[order], 0)  # float64: global running sum
        before = torch.zeros(num_nodes, dtype=torch.float64, device=pairs.device)
        nonempty = deg > 0
        start = self.ptr[:-1]
        before[nonempty & (start > 0)] = self.cum[start[nonempty & (start > 0)] - 1]
        self.before = before
        end_sum = torch.zeros(num_nodes, dtype=torch.float64, device=pairs.device)
        end_sum[nonempty] = self.cum[self.ptr[1:][nonempty] - 1]
        self.total = end_sum - before
        self.deg = deg

    def sample(self, nodes: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """One random neighbour of each of ``nodes`` (all of degree ≥ 1), ∝ the edge weights."""
        u = torch.rand(nodes.numel(), dtype=torch.float64, device=nodes.device, generator=generator)
        target = self.before[nodes] + u * self.total[nodes]
        pos = torch.searchsorted(self.cum, target, right=True)
        pos = torch.minimum(torch.maximum(pos, self.ptr[nodes]), self.ptr[nodes + 1] - 1)
        return self.col[pos]


def _cycle_popping(csr: _Csr, roots: torch.Tensor, num_nodes: int, generator: torch.Generator | None) -> torch.Tensor:
    """Successor (parent) array of a random spanning forest; ``parent[r] = r`` at the roots."""
    device = roots.device
    is_root = torch.zeros(num_nodes, dtype=torch.bool, device=device)
    is_root[roots] = True
    parent = torch.arange(num_nodes, device=device)
    todo = (~is_root).nonzero().flatten()
    if todo.numel():
        parent[todo] = csr.sample(todo, generator)
    steps = max(1, math.ceil(math.log2(max(num_nodes, 2))))
    done = is_root.clone()
    while True:
        # nodes whose successor chain reaches a root are final: their chain never lies on a cycle
        active = (~done).nonzero().flatten()
        if active.numel() == 0:
            return parent
        jump = parent.clone()
        for _ in range(steps + 1):  # jump = parent^(2^(steps+1)), 2^(steps+1) > n
            jump = jump[jump]
        end = jump[active]
        reached = done[end]
        done[active[reached]] = True
        stuck = end[~reached]
        if stuck.numel() == 0:
            continue
        on_cycle = torch.unique(stuck)  # the image of parent^(≥n) on non-final nodes = the cycle nodes
        parent[on_cycle] = csr.sample(on_cycle, generator)


def _wilson_sequential(
    csr: _Csr, roots: torch.Tensor, num_nodes: int, num_trees: int, generator: torch.Generator | None
) -> list[torch.Tensor]:
    """Textbook Wilson: loop-erased random walks from each node in turn (NumPy RNG seeded from torch)."""
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=roots.device).item())
    rng = np.random.default_rng(seed)
    ptr = csr.ptr.cpu().numpy()
    col = csr.col.cpu().numpy()
    cum = csr.cum.cpu().numpy()
    before = csr.before.cpu().numpy()
    total = csr.total.cpu().numpy()
    root_ids = roots.cpu().numpy()
    out = []
    for _ in range(num_trees):
        in_tree = np.zeros(num_nodes, dtype=bool)
        in_tree[root_ids] = True
        nxt = np.arange(num_nodes)
        for start in range(num_nodes):
            u = start
            while not in_tree[u]:  # walk, remembering only the last exit: this erases the loops
                t = before[u] + rng.random() * total[u]
                pos = int(np.searchsorted(cum[ptr[u] : ptr[u + 1]], t, side="right")) + ptr[u]
                nxt[u] = col[min(pos, ptr[u + 1] - 1)]
                u = nxt[u]
            u = start
            while not in_tree[u]:
                in_tree[u] = True
                u = nxt[u]
        out.append(torch.as_tensor(nxt, device=roots.device))
    return out


def sample_spanning_forests(
    edge_index: torch.Tensor,
    edge_weight: torch.Tensor | None,
    num_nodes: int,
    num_trees: int,
    generator: torch.Generator | None = None,
    *,
    sampler: Sampler = "cycle-popping",
) -> torch.Tensor:
    """``num_trees`` independent random spanning forests, ``P(T) ∝ Π_{e∈T} w(e)``.

    Args:
        edge_index: ``LongTensor [2, E]``, read as undirected (see :func:`undirected_edges`).
        edge_weight: ``[E]`` positive weights ``w``, or None for uniform spanning trees.
        num_nodes: ``n`` (> 0); isolated nodes are single-node components.
        num_trees: ``N_T`` ≥ 1.
        generator: torch RNG (on ``edge_index``'s device) for reproducible samples.
        sampler: ``"cycle-popping"`` (vectorised, all trees at once) or ``"wilson"`` (sequential).

    Returns:
        ``LongTensor [N_T, 2, n − c]`` (``c`` components): row 0 the child, row 1 its parent towards the
        component's root (its smallest node id), children in increasing order; each edge once.
    """
    if not isinstance(num_trees, int) or num_trees < 1:
        raise GraphInputError(f"num_trees = {num_trees!r}: expected an integer >= 1")
    if sampler not in ("cycle-popping", "wilson"):
        raise GraphInputError(f"sampler = {sampler!r}: expected 'cycle-popping' or 'wilson'")
    pairs, weight = undirected_edges(edge_index, edge_weight, num_nodes)
    device = pairs.device
    comp = connected_components(pairs, num_nodes)
    roots = (comp == torch.arange(num_nodes, device=device)).nonzero().flatten()
    num_edges = num_nodes - roots.numel()
    if sampler == "wilson":
        csr = _Csr(pairs, weight, num_nodes)
        parents = _wilson_sequential(csr, roots, num_nodes, num_trees, generator)
    else:  # all N_T trees at once, as one graph made of N_T disjoint copies
        offs = (torch.arange(num_trees, device=device) * num_nodes).repeat_interleave(pairs.size(1))
        big = pairs.repeat(1, num_trees) + offs
        csr = _Csr(big, weight.repeat(num_trees), num_nodes * num_trees)
        all_roots = (roots[None, :] + num_nodes * torch.arange(num_trees, device=device)[:, None]).flatten()
        big_parent = _cycle_popping(csr, all_roots, num_nodes * num_trees, generator)
        base = num_nodes * torch.arange(num_trees, device=device)[:, None]
        parents = list(big_parent.view(num_trees, num_nodes) - base)
    out = torch.empty(num_trees, 2, num_edges, dtype=torch.long, device=device)
    nodes = torch.arange(num_nodes, device=device)
    for k, parent in enumerate(parents):
        child = nodes[parent != nodes]
        out[k, 0] = child
        out[k, 1] = parent[child]
    return out


def sample_spanning_tree(
    edge_index: torch.Tensor,
    edge_weight: torch.Tensor | None,
    num_nodes: int,
    generator: torch.Generator | None = None,
    *,
    sampler: Sampler = "cycle-popping",
) -> torch.Tensor:
    """One random spanning tree (forest when the graph is disconnected) with ``P(T) ∝ Π_{e∈T} w(e)``.

    Args:
        edge_index: ``LongTensor [2, E]``, undirected (both directions or one; merged).
        edge_weight: ``[E]`` positive weights, or None (uniform spanning tree).
        num_nodes: ``n``.
        generator: torch RNG for reproducibility.
        sampler: see :func:`sample_spanning_forests`.

    Returns:
        ``LongTensor [2, n − num_components]``, each tree edge once as ``(child, parent)``.
    """
    return sample_spanning_forests(edge_index, edge_weight, num_nodes, 1, generator, sampler=sampler)[0]


def is_spanning_forest(tree_edges: torch.Tensor, edge_index: torch.Tensor, num_nodes: int) -> bool:
    """True when ``tree_edges`` is a spanning forest of the graph ``edge_index``.

    That is: ``n − c`` edges (``c`` = components of the graph), all of them graph edges, no cycle, and
    the same connected components as the graph.
    """
    comp_g = connected_components(edge_index, num_nodes)
    n_comp = int((comp_g == torch.arange(num_nodes, device=comp_g.device)).sum())
    if tree_edges.shape != (2, num_nodes - n_comp):
        return False
    key = lambda a, b: torch.minimum(a, b) * num_nodes + torch.maximum(a, b)  # noqa: E731
    graph_keys = torch.unique(key(edge_index[0], edge_index[1]))
    tree_keys = key(tree_edges[0], tree_edges[1])
    if tree_keys.numel() and (torch.unique(tree_keys).numel() != tree_keys.numel()):
        return False
    if not bool(torch.isin(tree_keys, graph_keys).all()):
        return False
    if bool((tree_edges[0] == tree_edges[1]).any()):
        return False
    # n − c edges that connect every graph component ⇔ acyclic spanning forest
    return torch.equal(connected_components(tree_edges, num_nodes), comp_g)
