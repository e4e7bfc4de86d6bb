"""Rooting a spanning forest at its centroids and grouping its nodes by level.

FGL's tree aggregator (Theorem 1) runs one bottom-up and one top-down pass. Rooting each tree at its
**centroid** (the node whose removal leaves no part larger than half the tree) keeps the trees shallow,
and processing a whole level at once makes each pass ``depth`` vectorised steps instead of ``n``
Python steps. The schedule is built once per sampled forest and reused every epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.ops.components import connected_components

__all__ = ["TreeSchedule", "build_tree_schedule"]


@dataclass(frozen=True)
class TreeSchedule:
    """A rooted spanning forest in level order.

    Attributes:
        num_nodes: ``n``.
        order: ``LongTensor [n]``: the nodes sorted by level (roots first).
        level_ptr: Level ``L`` is ``order[level_ptr[L]:level_ptr[L+1]]``; ``len = depth + 2``.
        parent_local: ``LongTensor [n]`` aligned with ``order``: the parent's index inside the previous
            level's slice (``-1`` for roots).
        parent: ``LongTensor [n]`` by node: the parent node (``-1`` at the roots).
        edge_id: ``LongTensor [n]`` by node: the column of the input ``tree_edges`` joining the node to
            its parent (``-1`` at the roots).
        child_is_src: ``BoolTensor [n]`` by node: whether that edge is stored as ``(child, parent)``.
        roots: ``LongTensor [c]``: the centroid of every component.
    """

    num_nodes: int
    order: torch.Tensor
    level_ptr: tuple[int, ...]
    parent_local: torch.Tensor
    parent: torch.Tensor
    edge_id: torch.Tensor
    child_is_src: torch.Tensor
    roots: torch.Tensor

    @property
    def depth(self) -> int:
        """Number of levels below the roots."""
        return len(self.level_ptr) - 2

    def level(self, i: int) -> torch.Tensor:
        """The nodes of level ``i`` (``LongTensor``)."""
        return self.order[self.level_ptr[i] : self.level_ptr[i + 1]]

    def directed_weights(self, w_fwd: torch.Tensor, w_bwd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-node ``(up, down)`` weights from per-edge ``(src→dst, dst→src)`` weights.

        ``up[v] = α_{v→Fa(v)}``, ``down[v] = α_{Fa(v)→v}`` (0 at the roots), differentiable in the inputs.
        """
        nonroot = self.edge_id >= 0
        eid = self.edge_id.clamp(min=0)
        fwd, bwd = w_fwd[eid], w_bwd[eid]
        up = torch.where(self.child_is_src, fwd, bwd) * nonroot
        down = torch.where(self.child_is_src, bwd, fwd) * nonroot
        return up, down


def _csr(tree_edges: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m = tree_edges.size(1)
    src = torch.cat([tree_edges[0], tree_edges[1]])
    dst = torch.cat([tree_edges[1], tree_edges[0]])
    eid = torch.arange(m, device=tree_edges.device).repeat(2)
    order = torch.argsort(src, stable=True)
    ptr = torch.zeros(n + 1, dtype=torch.long, device=tree_edges.device)
    ptr[1:] = torch.cumsum(torch.bincount(src, minlength=n), 0)
    return ptr, dst[order], eid[order]


def _bfs(
    ptr: torch.Tensor, col: torch.Tensor, eid: torch.Tensor, roots: torch.Tensor, n: int
) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    """Level-synchronous BFS over a forest: (levels, parent, edge id to parent)."""
    device = roots.device
    parent = torch.full((n,), -1, dtype=torch.long, device=device)
    to_parent = torch.full((n,), -1, dtype=torch.long, device=device)
    visited = torch.zeros(n, dtype=torch.bool, device=device)
    visited[roots] = True
    levels = [roots]
    frontier = roots
    while True:
        deg = ptr[frontier + 1] - ptr[frontier]
        total = int(deg.sum())
        if total == 0:
            break
        rep = frontier.repeat_interleave(deg)
        offset = torch.arange(total, device=device) - (torch.cumsum(deg, 0) - deg).repeat_interleave(deg)
        arc = ptr[rep] + offset
        nb = col[arc]
        new = ~visited[nb]
        child = nb[new]
        if child.numel() == 0:
            break
        parent[child] = rep[new]
        to_parent[child] = eid[arc[new]]
        visited[child] = True
        levels.append(child)
        frontier = child
    return levels, parent, to_parent


def build_tree_schedule(tree_edges: torch.Tensor, num_nodes: int) -> TreeSchedule:
    """Root every tree of the forest ``tree_edges`` at its centroid and order its nodes by level.

    Args:
        tree_edges: ``LongTensor [2, m]``, an undirected forest on ``num_nodes`` nodes (each edge once).
        num_nodes: ``n``; nodes without a tree edge are single-node trees.

    Returns:
        The :class:`TreeSchedule`. Raises :class:`GraphInputError` when ``tree_edges`` is not a forest.
    """
    if tree_edges.dim() != 2 or tree_edges.size(0) != 2:
        raise GraphInputError(f"tree_edges must be a LongTensor [2, m], got shape {tuple(tree_edges.shape)}")
    if num_nodes <= 0:
        raise GraphInputError(f"num_nodes = {num_nodes}: the tree is empty")
    tree_edges = tree_edges.long()
    n, device = num_nodes, tree_edges.device
    if tree_edges.numel() and (int(tree_edges.min()) < 0 or int(tree_edges.max()) >= n):
        raise GraphInputError(f"tree_edges holds node ids outside [0, num_nodes = {n})")
    if bool((tree_edges[0] == tree_edges[1]).any()):
        raise GraphInputError("tree_edges holds a self-loop: not a forest")
    comp = connected_components(tree_edges, n)
    first = (comp == torch.arange(n, device=device)).nonzero().flatten()
    if tree_edges.size(1) != n - first.numel():
        raise GraphInputError(
            f"tree_edges has {tree_edges.size(1)} edges but a spanning forest of its {first.numel()} "
            f"components on {n} nodes has {n - first.numel()}: it contains a cycle or a repeated edge"
        )
    ptr, col, eid = _csr(tree_edges, n)
    # 1) any rooting -> subtree sizes -> centroids
    levels, parent, _ = _bfs(ptr, col, eid, first, n)
    size = torch.ones(n, dtype=torch.long, device=device)
    for lev in reversed(levels[1:]):
        size.index_add_(0, parent[lev], size[lev])
    nonroot = parent >= 0
    max_child = torch.zeros(n, dtype=torch.long, device=device)
    max_child.scatter_reduce_(0, parent[nonroot], size[nonroot], reduce="amax")
    max_part = torch.maximum(size[comp] - size, max_child)
    best = torch.full((n,), n + 1, dtype=torch.long, device=device).scatter_reduce(
        0, comp, max_part, reduce="amin", include_self=True
    )
    cand = torch.where(max_part == best[comp], torch.arange(n, device=device), torch.full_like(comp, n))
    centroid = torch.full((n,), n, dtype=torch.long, device=device).scatter_reduce(
        0, comp, cand, reduce="amin", include_self=True
    )
    roots = centroid[first]
    # 2) root at the centroids
    levels, parent, to_parent = _bfs(ptr, col, eid, roots, n)
    order = torch.cat(levels)
    sizes = [int(lev.numel()) for lev in levels]
    level_ptr = [0]
    for s in sizes:
        level_ptr.append(level_ptr[-1] + s)
    local = torch.empty(n, dtype=torch.long, device=device)
    for lev in levels:
        local[lev] = torch.arange(lev.numel(), device=device)
    parent_local = torch.full((n,), -1, dtype=torch.long, device=device)
    nonroot_pos = parent[order] >= 0
    parent_local[nonroot_pos] = local[parent[order][nonroot_pos]]
    safe = to_parent.clamp(min=0)
    child_is_src = (tree_edges[0][safe] == torch.arange(n, device=device)) & (to_parent >= 0)
    return TreeSchedule(
        num_nodes=n,
        order=order,
        level_ptr=tuple(level_ptr),
        parent_local=parent_local,
        parent=parent,
        edge_id=to_parent,
        child_is_src=child_is_src,
        roots=roots,
    )
