r"""``ForestConv``: a PyG ``MessagePassing`` layer that aggregates over a forest of random spanning trees.

.. math::  H' = \operatorname{Mean}_{k=1}^{N_T} \operatorname{RowNorm}_{L2}\big( f^{(T_k)}(H) \big),
           \qquad T_k \sim P(T) \propto \prod_{e \in T} s(e),

where :math:`f^{(T)}` is Theorem 1's tree aggregator (:class:`~iclr26_graphs.nn.TreeAggregator`, shared
weights across trees) and ``s(e_ij) = (w_{j→i} + w_{i→j}) / 2`` comes from the layer's ``edge_weight``
(uniform trees when it is None or ``uniform_sampling``). ``edge_weight`` also weights the messages along
tree paths. With ``direction="receiver"`` (default, PyG's convention) ``edge_weight[e]`` weights the
message from ``edge_index[0, e]`` to ``edge_index[1, e]``: for attention ``α_{i→j}`` stored on the arc
``(j, i)`` the message ``a → b`` is weighted by ``α_{b→a}``, the receiver's attention on the sender. With
``direction="sender"`` it weights the message from ``edge_index[1, e]`` to ``edge_index[0, e]``: the
message ``a → b`` is weighted by ``α_{a→b}``, the sender's attention on the receiver, which is how
Theorem 1 of the paper writes the bottom-up pass (``α_{v→u}`` for child ``v`` → parent ``u``). With
``normalize=True`` (not in the paper) every node's incoming tree-neighbour weights are rescaled to sum
to one.

Like ``GCNConv(cached=True)``, the sampled forest is cached after the first call (``cached=True``);
pass ``forest=`` to use your own and :meth:`sample_forest` to draw one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch_geometric.nn import MessagePassing

from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.nn.tree_aggregator import TreeAggregator, tree_aggregate
from iclr26_graphs.ops.spanning_tree import Sampler, sample_spanning_forests
from iclr26_graphs.ops.tree_schedule import TreeSchedule, build_tree_schedule

__all__ = ["Direction", "Forest", "ForestConv", "make_forest"]

Direction = Literal["receiver", "sender"]


@dataclass(frozen=True)
class Forest:
    """``N_T`` spanning forests of one graph, rooted and level-ordered as one disjoint union.

    Attributes:
        trees: ``LongTensor [N_T, 2, m]``: tree edges ``(child, parent)`` per tree.
        num_nodes: ``n``.
        schedule: Rooted level order of the union (node ``k·n + v`` is node ``v`` of tree ``k``).
        arc_fwd: ``LongTensor [N_T·m]``: the distinct arc ``trees[k,0] → trees[k,1]`` of ``edge_index``.
        arc_bwd: same for the reverse arc (the forward arc when the graph stores one direction only).
        arc_of_edge: ``LongTensor [E]``: the distinct arc of every column of ``edge_index`` (repeated
            columns share one arc; their weights are averaged).
        num_arcs: Number of distinct arcs.
    """

    trees: torch.Tensor
    num_nodes: int
    schedule: TreeSchedule
    arc_fwd: torch.Tensor
    arc_bwd: torch.Tensor
    arc_of_edge: torch.Tensor
    num_arcs: int

    @property
    def num_trees(self) -> int:
        """``N_T``."""
        return int(self.trees.size(0))


def _arc_lookup(keys: torch.Tensor, n: int, src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    """Position of each arc ``src → dst`` in the sorted unique arc ``keys`` (``-1`` when absent)."""
    want = src * n + dst
    pos = torch.searchsorted(keys, want).clamp(max=max(keys.numel() - 1, 0))
    found = keys[pos] == want if keys.numel() else torch.zeros_like(want, dtype=torch.bool)
    return torch.where(found, pos, torch.full_like(pos, -1))


def make_forest(edge_index: torch.Tensor, num_nodes: int, trees: torch.Tensor) -> Forest:
    """Wrap sampled ``trees [N_T, 2, m]`` of the graph ``edge_index`` into a :class:`Forest`."""
    if trees.dim() != 3 or trees.size(1) != 2:
        raise GraphInputError(f"trees must be a LongTensor [N_T, 2, m], got shape {tuple(trees.shape)}")
    n_t, _, m = trees.shape
    offs = (torch.arange(n_t, device=trees.device) * num_nodes)[:, None]
    union = torch.stack([(trees[:, 0] + offs).flatten(), (trees[:, 1] + offs).flatten()])
    schedule = build_tree_schedule(union, num_nodes * n_t)
    keys, inverse = torch.unique(edge_index[0] * num_nodes + edge_index[1], return_inverse=True)
    a, b = trees[:, 0].flatten(), trees[:, 1].flatten()
    fwd = _arc_lookup(keys, num_nodes, a, b)
    bwd = _arc_lookup(keys, num_nodes, b, a)
    if bool(((fwd < 0) & (bwd < 0)).any()):
        raise GraphInputError("trees use an edge that is not in edge_index")
    fwd = torch.where(fwd >= 0, fwd, bwd)
    bwd = torch.where(bwd >= 0, bwd, fwd)
    return Forest(
        trees=trees,
        num_nodes=num_nodes,
        schedule=schedule,
        arc_fwd=fwd,
        arc_bwd=bwd,
        arc_of_edge=inverse,
        num_arcs=int(keys.numel()),
    )


class ForestConv(MessagePassing):
    """Mean of row-normalised tree aggregations over ``N_T`` random spanning trees.

    Args:
        in_channels: Input feature size.
        out_channels: Output feature size.
        num_trees: ``N_T`` (the paper finds 6–10 best).
        uniform_sampling: Sample uniform spanning trees instead of ``∝ Π s(e)``.
        normalize: Rescale incoming tree-neighbour weights of every node to sum to 1 (not in the paper).
        direction: ``"receiver"``: ``edge_weight[e]`` weights the message ``edge_index[0, e] → edge_index[1, e]``;
            ``"sender"``: the message ``edge_index[1, e] → edge_index[0, e]`` (see the module docstring).
        row_norm: L2-normalise every node's output per tree before averaging (the paper's RowNorm).
        cached: Keep the first sampled forest for later calls (transductive training).
        sampler: ``"cycle-popping"`` or ``"wilson"``.
        bias: Bias in ``W_B``.

    Shapes:
        ``forward(x [n, in], edge_index [2, E], edge_weight [E] | None) -> [n, out]``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        num_trees: int = 8,
        *,
        uniform_sampling: bool = False,
        normalize: bool = False,
        direction: Direction = "receiver",
        row_norm: bool = True,
        cached: bool = True,
        sampler: Sampler = "cycle-popping",
        bias: bool = False,
    ) -> None:
        super().__init__(aggr="add")
        if num_trees < 1:
            raise GraphInputError(f"num_trees = {num_trees}: expected >= 1")
        self.in_channels, self.out_channels, self.num_trees = in_channels, out_channels, num_trees
        if direction not in ("receiver", "sender"):
            raise GraphInputError(f"direction = {direction!r}: expected 'receiver' or 'sender'")
        self.uniform_sampling, self.normalize, self.row_norm = uniform_sampling, normalize, row_norm
        self.direction: Direction = direction
        self.cached = cached
        self.sampler: Sampler = sampler
        self.aggregator = TreeAggregator(in_channels, out_channels, bias=bias)
        self._forest: Forest | None = None

    def reset_parameters(self) -> None:
        """Re-initialise the weights and forget the cached forest."""
        super().reset_parameters()
        self.aggregator.reset_parameters()
        self._forest = None

    def sample_forest(
        self,
        edge_index: torch.Tensor,
        num_nodes: int,
        edge_weight: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> Forest:
        """Draw ``N_T`` spanning forests with ``P(T) ∝ Π s(e)`` (or uniform) and root them.

        Weights below ``1e-6`` are raised to ``1e-6`` so that every component keeps a spanning tree.
        """
        w = None if (self.uniform_sampling or edge_weight is None) else edge_weight.detach().clamp(min=1e-6)
        trees = sample_spanning_forests(edge_index, w, num_nodes, self.num_trees, generator, sampler=self.sampler)
        return make_forest(edge_index, num_nodes, trees)

    def forward(  # type: ignore[override]
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        edge_weight: torch.Tensor | None = None,
        forest: Forest | None = None,
    ) -> torch.Tensor:
        n = x.size(0)
        if forest is None:
            forest = self._forest if (self.cached and self._forest is not None) else None
            if forest is None:
                forest = self.sample_forest(edge_index, n, edge_weight)
                if self.cached:
                    self._forest = forest
        if forest.num_nodes != n:
            raise GraphInputError(f"the forest has {forest.num_nodes} nodes but x has {n} rows")
        n_t = forest.num_trees
        if edge_weight is None:
            edge_weight = torch.ones(edge_index.size(1), dtype=x.dtype, device=x.device)
        if edge_weight.shape != (forest.arc_of_edge.numel(),):
            raise GraphInputError(
                f"edge_weight has shape {tuple(edge_weight.shape)}; the forest's graph has "
                f"{forest.arc_of_edge.numel()} arcs"
            )
        ones = torch.ones_like(edge_weight, dtype=x.dtype)
        count = torch.zeros(forest.num_arcs, dtype=x.dtype, device=x.device).index_add(0, forest.arc_of_edge, ones)
        arc_w = torch.zeros(forest.num_arcs, dtype=x.dtype, device=x.device).index_add(
            0, forest.arc_of_edge, edge_weight.to(x.dtype)
        ) / count.clamp(min=1)
        # receiver: the message child → parent has the weight of the arc (child, parent); sender: of (parent, child)
        w_fwd = arc_w[forest.arc_fwd if self.direction == "receiver" else forest.arc_bwd]
        w_bwd = arc_w[forest.arc_bwd if self.direction == "receiver" else forest.arc_fwd]
        if self.normalize:
            trees = forest.trees
            offs = (torch.arange(n_t, device=x.device) * n)[:, None]
            a, b = (trees[:, 0] + offs).flatten(), (trees[:, 1] + offs).flatten()
            incoming = torch.zeros(n * n_t, dtype=x.dtype, device=x.device)
            incoming = incoming.index_add(0, b, w_fwd).index_add(0, a, w_bwd)
            w_fwd = w_fwd / incoming[b].clamp(min=1e-12)
            w_bwd = w_bwd / incoming[a].clamp(min=1e-12)
        up, down = forest.schedule.directed_weights(w_fwd, w_bwd)
        b_all = self.aggregator.lin_b(x).repeat(n_t, 1)
        out = tree_aggregate(b_all, forest.schedule, up, down, self.aggregator.lin_a.weight).view(n_t, n, -1)
        if self.row_norm:
            out = F.normalize(out, p=2.0, dim=-1)
        return out.mean(0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels}, num_trees={self.num_trees})"
