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

**Bridges.** Every spanning forest contains every bridge (an edge on no cycle), oriented towards the
root, so a bridge's weight does not enter ``P(T)`` and its orientation is known before sampling. Both
samplers use this (:func:`bridge_orientation`): the far end ``a`` of a bridge ``{a, b}`` (the end away
from the root) always steps to ``b``, and ``b`` never steps to ``a``. In the cycle-popping view this
replaces two nodes' successor laws by laws that put the same relative mass on every tree the algorithm
can output (``a``'s parent is ``b`` in every tree, ``b``'s never ``a``), so ``P(T) ∝ Π w(e)`` is
unchanged. Without it the running time (the hitting time of the root) explodes when a pendant part
hangs on a bridge of tiny weight: FGL's attention scores are floored at 1e-6, and a node whose only
other edge leads to a degree-1 leaf then escapes with probability ~1e-6 per round (issue 16: the smoke
cSBM at ``k = 0`` stalled this way). Ill-conditioned cuts of two or more edges can still make the walk
slow; ``max_rounds`` turns that into a clear error instead of an endless loop.
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
    "SamplerStalledError",
    "bridge_orientation",
    "is_spanning_forest",
    "sample_spanning_forests",
    "sample_spanning_tree",
    "undirected_edges",
]


class SamplerStalledError(GraphInputError):
    """The random walk did not reach the roots within the step budget (ill-conditioned edge weights)."""


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
    """Directed arcs in CSR form with cumulative weights for O(log deg) successor sampling.

    ``src → dst`` with weight ``w > 0``; arcs of weight 0 are dropped (they can never be drawn).
    """

    def __init__(self, src: torch.Tensor, dst: torch.Tensor, w: torch.Tensor, num_nodes: int) -> None:
        keep = w > 0
        src, dst, w = src[keep], dst[keep], w[keep]
        order = torch.argsort(src * num_nodes + dst)
        self.col = dst[order]
        deg = torch.bincount(src, minlength=num_nodes)
        self.ptr = torch.zeros(num_nodes + 1, dtype=torch.long, device=src.device)
        self.ptr[1:] = torch.cumsum(deg, 0)
        self.cum = torch.cumsum(w[order], 0)  # float64: global running sum
        before = torch.zeros(num_nodes, dtype=torch.float64, device=src.device)
        nonempty = deg > 0
        start = self.ptr[:-1]
        before[nonempty & (start > 0)] = self.cum[start[nonempty & (start > 0)] - 1]
        self.before = before
        end_sum = torch.zeros(num_nodes, dtype=torch.float64, device=src.device)
        end_sum[nonempty] = self.cum[self.ptr[1:][nonempty] - 1]
        self.total = end_sum - before
        self.deg = deg

    @classmethod
    def from_pairs(
        cls, pairs: torch.Tensor, weight: torch.Tensor, num_nodes: int, bridges: torch.Tensor | None = None
    ) -> _Csr:
        """Both arcs of every undirected pair; ``bridges [2, B]`` rows (far end a, near end b) fix a → b."""
        src = torch.cat([pairs[0], pairs[1]])
        dst = torch.cat([pairs[1], pairs[0]])
        w = torch.cat([weight, weight])
        if bridges is not None and bridges.size(1):
            key = src * num_nodes + dst
            up = torch.isin(key, bridges[0] * num_nodes + bridges[1])  # a → b
            down = torch.isin(key, bridges[1] * num_nodes + bridges[0])  # b → a
            far = torch.zeros(num_nodes, dtype=torch.bool, device=src.device)
            far[bridges[0]] = True
            w = torch.where(far[src] | down, torch.zeros_like(w), w)  # a keeps only its bridge arc, b never steps to a
            w = torch.where(up, torch.ones_like(w), w)
        return cls(src, dst, w, num_nodes)

    def sample(self, nodes: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """One random neighbour of each of ``nodes`` (all of degree ≥ 1), ∝ the edge weights."""
        u = torch.rand(nodes.numel(), dtype=torch.float64, device=nodes.device, generator=generator)
        target = self.before[nodes] + u * self.total[nodes]
        pos = torch.searchsorted(self.cum, target, right=True)
        pos = torch.minimum(torch.maximum(pos, self.ptr[nodes]), self.ptr[nodes + 1] - 1)
        return self.col[pos]


def bridge_orientation(pairs: torch.Tensor, num_nodes: int, roots: torch.Tensor) -> torch.Tensor:
    """The bridges of a simple undirected graph, each as ``(far end, near end)`` seen from its component's root.

    Tarjan's low-link rule on an iterative depth-first search from every root (``O(n + M)``): the tree
    edge ``{p, c}`` (``p`` the DFS parent) is a bridge iff ``low(c) > disc(p)``; its far end is ``c``.

    Args:
        pairs: ``LongTensor [2, M]``, each undirected edge once, no self-loops (see :func:`undirected_edges`).
        num_nodes: ``n``.
        roots: ``LongTensor [c]``, one node of every connected component.

    Returns:
        ``LongTensor [2, B]``: row 0 the far end ``a``, row 1 the near end ``b`` of each bridge.
    """
    m = pairs.size(1)
    src = torch.cat([pairs[0], pairs[1]]).cpu()
    dst = torch.cat([pairs[1], pairs[0]]).cpu()
    eid = torch.arange(m).repeat(2)
    order = torch.argsort(src, stable=True)
    col, ids = dst[order].tolist(), eid[order].tolist()
    ptr = [0, *torch.cumsum(torch.bincount(src, minlength=num_nodes), 0).tolist()]
    disc = [-1] * num_nodes
    low = [0] * num_nodes
    pos = ptr[:-1].copy()
    up_edge = [-1] * num_nodes
    up_node = [-1] * num_nodes
    far: list[int] = []
    near: list[int] = []
    clock = 0
    for r in roots.tolist():
        if disc[r] >= 0:
            continue
        disc[r] = low[r] = clock
        clock += 1
        stack = [r]
        while stack:
            v = stack[-1]
            i = pos[v]
            if i < ptr[v + 1]:
                pos[v] = i + 1
                u, e = col[i], ids[i]
                if e == up_edge[v]:
                    continue
                if disc[u] < 0:
                    disc[u] = low[u] = clock
                    clock += 1
                    up_edge[u], up_node[u] = e, v
                    stack.append(u)
                elif disc[u] < low[v]:
                    low[v] = disc[u]
            else:
                stack.pop()
                if stack:
                    p = up_node[v]
                    if low[v] < low[p]:
                        low[p] = low[v]
                    if low[v] > disc[p]:
                        far.append(v)
                        near.append(p)
    return torch.tensor([far, near], dtype=torch.long, device=pairs.device).view(2, -1)


def _stalled(where: str, budget: str, stuck: torch.Tensor, num_nodes: int) -> SamplerStalledError:
    ids = sorted({int(v) % num_nodes for v in stuck[:50].tolist()})[:8]
    return SamplerStalledError(
        f"{where}: the random walk did not reach the roots within {budget} (nodes {ids} still cycle "
        "among themselves). Every spanning forest exists, so the edge weights are ill-conditioned: a set "
        "of nodes is joined to the rest only by edges whose weights are tiny next to its inner edges, and "
        "the walk leaves it with a tiny probability per step. Raise the smallest weights (a larger floor) "
        "or pass a larger max_rounds"
    )


def _cycle_popping(
    csr: _Csr,
    roots: torch.Tensor,
    num_nodes: int,
    generator: torch.Generator | None,
    max_rounds: int,
    base_nodes: int,
) -> torch.Tensor:
    """Successor (parent) array of a random spanning forest; ``parent[r] = r`` at the roots.

    Raises :class:`SamplerStalledError` after ``max_rounds`` popping rounds (``base_nodes``: the size of
    one copy of the graph, for the node ids in the message).
    """
    device = roots.device
    is_root = torch.zeros(num_nodes, dtype=torch.bool, device=device)
    is_root[roots] = True
    parent = torch.arange(num_nodes, device=device)
    todo = (~is_root).nonzero().flatten()
    if todo.numel():
        parent[todo] = csr.sample(todo, generator)
    steps = max(1, math.ceil(math.log2(max(num_nodes, 2))))
    done = is_root.clone()
    rounds = 0
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
        rounds += 1
        if rounds > max_rounds:
            raise _stalled("cycle popping", f"max_rounds = {max_rounds} rounds", on_cycle, base_nodes)
        parent[on_cycle] = csr.sample(on_cycle, generator)


def _wilson_sequential(
    csr: _Csr,
    roots: torch.Tensor,
    num_nodes: int,
    num_trees: int,
    generator: torch.Generator | None,
    max_rounds: int,
) -> list[torch.Tensor]:
    """Textbook Wilson: loop-erased random walks from each node in turn (NumPy RNG seeded from torch).

    Raises :class:`SamplerStalledError` when one tree takes more than ``max_rounds · n`` walk steps.
    """
    max_steps = max_rounds * num_nodes
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
        walked = 0
        for start in range(num_nodes):
            u = start
            while not in_tree[u]:  # walk, remembering only the last exit: this erases the loops
                walked += 1
                if walked > max_steps:
                    raise _stalled("Wilson's walk", f"max_rounds · n = {max_steps} steps", torch.tensor([u]), num_nodes)
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
    max_rounds: int | None = None,
) -> torch.Tensor:
    """``num_trees`` independent random spanning forests, ``P(T) ∝ Π_{e∈T} w(e)``.

    Args:
        edge_index: ``LongTensor [2, E]``, read as undirected (see :func:`undirected_edges`).
        edge_weight: ``[E]`` positive weights ``w``, or None for uniform spanning trees.
        num_nodes: ``n`` (> 0); isolated nodes are single-node components.
        num_trees: ``N_T`` ≥ 1.
        generator: torch RNG (on ``edge_index``'s device) for reproducible samples.
        sampler: ``"cycle-popping"`` (vectorised, all trees at once) or ``"wilson"`` (sequential).
        max_rounds: guard against a walk that (practically) never reaches the roots: at most this many
            popping rounds (``"wilson"``: ``max_rounds · n`` walk steps per tree). None: ``100 n + 10⁴``.

    Raises:
        GraphInputError: bad input (shapes, ids out of range, weights not finite and > 0).
        SamplerStalledError: the guard was hit (ill-conditioned weights, see the module docstring).

    Returns:
        ``LongTensor [N_T, 2, n − c]`` (``c`` components): row 0 the child, row 1 its parent towards the
        component's root (its smallest node id), children in increasing order; each edge once.
    """
    if not isinstance(num_trees, int) or num_trees < 1:
        raise GraphInputError(f"num_trees = {num_trees!r}: expected an integer >= 1")
    if sampler not in ("cycle-popping", "wilson"):
        raise GraphInputError(f"sampler = {sampler!r}: expected 'cycle-popping' or 'wilson'")
    if max_rounds is None:
        max_rounds = 100 * num_nodes + 10_000
    if not isinstance(max_rounds, int) or isinstance(max_rounds, bool) or max_rounds < 1:
        raise GraphInputError(f"max_rounds = {max_rounds!r}: expected an integer >= 1")
    pairs, weight = undirected_edges(edge_index, edge_weight, num_nodes)
    device = pairs.device
    comp = connected_components(pairs, num_nodes)
    roots = (comp == torch.arange(num_nodes, device=device)).nonzero().flatten()
    num_edges = num_nodes - roots.numel()
    bridges = bridge_orientation(pairs, num_nodes, roots)
    if sampler == "wilson":
        csr = _Csr.from_pairs(pairs, weight, num_nodes, bridges)
        parents = _wilson_sequential(csr, roots, num_nodes, num_trees, generator, max_rounds)
    else:  # all N_T trees at once, as one graph made of N_T disjoint copies
        copies = num_nodes * torch.arange(num_trees, device=device)
        big = pairs.repeat(1, num_trees) + copies.repeat_interleave(pairs.size(1))
        big_bridges = bridges.repeat(1, num_trees) + copies.repeat_interleave(bridges.size(1))
        csr = _Csr.from_pairs(big, weight.repeat(num_trees), num_nodes * num_trees, big_bridges)
        all_roots = (roots[None, :] + copies[:, None]).flatten()
        big_parent = _cycle_popping(csr, all_roots, num_nodes * num_trees, generator, max_rounds, num_nodes)
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
    max_rounds: int | None = None,
) -> torch.Tensor:
    """One random spanning tree (forest when the graph is disconnected) with ``P(T) ∝ Π_{e∈T} w(e)``.

    Args:
        edge_index: ``LongTensor [2, E]``, undirected (both directions or one; merged).
        edge_weight: ``[E]`` positive weights, or None (uniform spanning tree).
        num_nodes: ``n``.
        generator: torch RNG for reproducibility.
        sampler: see :func:`sample_spanning_forests`.
        max_rounds: the stall guard, see :func:`sample_spanning_forests`.

    Returns:
        ``LongTensor [2, n − num_components]``, each tree edge once as ``(child, parent)``.
    """
    return sample_spanning_forests(
        edge_index, edge_weight, num_nodes, 1, generator, sampler=sampler, max_rounds=max_rounds
    )[0]


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
