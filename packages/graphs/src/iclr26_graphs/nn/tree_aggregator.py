r"""FGL's linear-time tree aggregator (Theorem 1) and its dense all-pairs twin.

On a tree :math:`T`, the aggregator lets every node see every other node through the tree path:

.. math::  H'_v = \sum_{w} \Big( \prod_{(a \to b) \in \mathrm{path}(w \to v)} \alpha_{a \to b} W_A \Big) W_B H_w,

i.e. ``H'_v = Σ_w (Π_path α) W_A^{d(w, v)} W_B H_w``. Theorem 1 computes it in two passes over the
tree rooted at ``r``:

.. math::
    \text{bottom-up:}\quad S_u &= \sum_{v \in \mathrm{Child}(u)} \alpha_{v \to u} W_A S_v + W_B H_u, \\
    \text{top-down:}\quad H'_r &= S_r, \qquad
    H'_v = S_v + \alpha_{\mathrm{Fa}(v) \to v} W_A
        \big( H'_{\mathrm{Fa}(v)} - \alpha_{v \to \mathrm{Fa}(v)} W_A S_v \big).

Here the tree is rooted at its centroid and each pass is vectorised over a whole level
(:class:`~iclr26_graphs.ops.TreeSchedule`): ``O(n d²)`` work in ``depth`` steps. Feature rows are
row vectors, so ``W_A S`` is ``S @ W_A.T``.
"""

from __future__ import annotations

import torch
from torch import nn

from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.ops.tree_schedule import TreeSchedule, build_tree_schedule

__all__ = ["TreeAggregator", "naive_tree_aggregate", "tree_aggregate"]


def _edge_weights(
    tree_edges: torch.Tensor, w_fwd: torch.Tensor | None, w_bwd: torch.Tensor | None, like: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    m = tree_edges.size(1)
    if w_fwd is None:
        w_fwd = torch.ones(m, dtype=like.dtype, device=like.device)
    if w_bwd is None:
        w_bwd = w_fwd
    for name, w in (("w_fwd", w_fwd), ("w_bwd", w_bwd)):
        if w.shape != (m,):
            raise GraphInputError(
                f"{name} must have shape [m] = [{m}] (one weight per tree edge), got {tuple(w.shape)}"
            )
    return w_fwd.to(like.dtype), w_bwd.to(like.dtype)


def tree_aggregate(
    b: torch.Tensor,
    schedule: TreeSchedule,
    up: torch.Tensor,
    down: torch.Tensor,
    weight_a: torch.Tensor,
) -> torch.Tensor:
    """The two passes of Theorem 1 on pre-transformed features ``b = W_B H``.

    Args:
        b: ``[n, d]``: ``W_B H`` (row ``u`` is ``W_B H_u``).
        schedule: The rooted forest in level order.
        up: ``[n]``: ``α_{v→Fa(v)}`` by node (ignored at roots).
        down: ``[n]``: ``α_{Fa(v)→v}`` by node (ignored at roots).
        weight_a: ``[d, d]``: ``W_A``.

    Returns:
        ``[n, d]``: ``H'`` by node.
    """
    depth = schedule.depth
    levels = [schedule.level(i) for i in range(depth + 1)]
    ptr = schedule.level_ptr
    par = [schedule.parent_local[ptr[i] : ptr[i + 1]] for i in range(depth + 1)]
    s: list[torch.Tensor] = [b[lev] for lev in levels]
    msg: list[torch.Tensor | None] = [None] * (depth + 1)
    for i in range(depth, 0, -1):  # bottom-up: S_u = W_B H_u + Σ_children α_{v→u} W_A S_v
        m = up[levels[i], None] * (s[i] @ weight_a.T)
        msg[i] = m
        s[i - 1] = s[i - 1].index_add(0, par[i], m)
    h: list[torch.Tensor] = [s[0]]
    for i in range(1, depth + 1):  # top-down: H'_v = S_v + α_{Fa→v} W_A (H'_Fa − α_{v→Fa} W_A S_v)
        rest = h[i - 1][par[i]] - msg[i]  # type: ignore[operator]
        h.append(s[i] + down[levels[i], None] * (rest @ weight_a.T))
    out = torch.cat(h)
    return torch.empty_like(out).index_copy(0, schedule.order, out)


class TreeAggregator(nn.Module):
    """Theorem 1's linear aggregator ``H'_v = Σ_w (Π_path α) W_A^{d(w,v)} W_B H_w`` in linear time.

    Args:
        in_channels: ``d_in`` of ``H``.
        out_channels: ``d`` of ``W_B H`` and ``H'``.
        bias: Add a bias to ``W_B`` (default False, as in the paper's formula).

    Shapes:
        ``forward(x [n, d_in], tree_edges [2, m], w_fwd [m] | None, w_bwd [m] | None) -> [n, d]``, where
        ``w_fwd[e] = α_{src→dst}`` and ``w_bwd[e] = α_{dst→src}`` of tree edge ``e`` (default 1; ``w_bwd``
        defaults to ``w_fwd``). A precomputed ``schedule`` skips the rooting step.
    """

    def __init__(self, in_channels: int, out_channels: int, *, bias: bool = False) -> None:
        super().__init__()
        self.lin_b = nn.Linear(in_channels, out_channels, bias=bias)
        self.lin_a = nn.Linear(out_channels, out_channels, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``W_B``: PyTorch's default; ``W_A``: scaled to spectral norm ≈ 1/2 so long paths decay."""
        self.lin_b.reset_parameters()
        nn.init.orthogonal_(self.lin_a.weight, gain=0.5)

    def forward(
        self,
        x: torch.Tensor,
        tree_edges: torch.Tensor,
        w_fwd: torch.Tensor | None = None,
        w_bwd: torch.Tensor | None = None,
        *,
        schedule: TreeSchedule | None = None,
    ) -> torch.Tensor:
        if x.dim() != 2:
            raise GraphInputError(f"x must be [n, d_in], got shape {tuple(x.shape)}")
        if schedule is None:
            schedule = build_tree_schedule(tree_edges, x.size(0))
        elif schedule.num_nodes != x.size(0):
            raise GraphInputError(f"schedule has {schedule.num_nodes} nodes but x has {x.size(0)} rows")
        w_fwd, w_bwd = _edge_weights(tree_edges, w_fwd, w_bwd, x)
        up, down = schedule.directed_weights(w_fwd, w_bwd)
        return tree_aggregate(self.lin_b(x), schedule, up, down, self.lin_a.weight)


def naive_tree_aggregate(
    x: torch.Tensor,
    tree_edges: torch.Tensor,
    weight_a: torch.Tensor,
    weight_b: torch.Tensor,
    w_fwd: torch.Tensor | None = None,
    w_bwd: torch.Tensor | None = None,
    bias_b: torch.Tensor | None = None,
) -> torch.Tensor:
    """The dense all-pairs definition ``H'_v = Σ_w P[v, w] W_A^{d(v,w)} W_B H_w``: ``O(n² · depth)``.

    ``P[v, w]`` (the product of ``α`` along the tree path from ``w`` to ``v``) is built for all pairs at
    once by a breadth-first search from every source: ``F_{k+1} = (A F_k) ⊙ [d(·, w) = k + 1]`` with
    ``A[v, u] = α_{u→v}`` (on a tree the path to a node at distance ``k + 1`` is unique). Memory is
    ``O(n²)``: a test oracle and the benchmark's baseline.

    Args:
        x: ``[n, d_in]``.
        tree_edges: ``LongTensor [2, m]``, a forest.
        weight_a: ``[d, d]`` (``W_A``); weight_b: ``[d, d_in]`` (``W_B``); bias_b: optional ``[d]``.
        w_fwd, w_bwd: ``[m]`` edge weights ``α_{src→dst}``, ``α_{dst→src}`` (default 1, ``w_bwd = w_fwd``).

    Returns:
        ``[n, d]``.
    """
    n = x.size(0)
    w_fwd, w_bwd = _edge_weights(tree_edges, w_fwd, w_bwd, x)
    src = torch.cat([tree_edges[0], tree_edges[1]])  # arc u -> v carries α_{u→v}
    dst = torch.cat([tree_edges[1], tree_edges[0]])
    alpha = torch.cat([w_fwd, w_bwd])
    g = x @ weight_b.T
    if bias_b is not None:
        g = g + bias_b
    f = torch.eye(n, dtype=x.dtype, device=x.device)  # F_0[v, w] = [v = w]
    seen = torch.eye(n, dtype=torch.bool, device=x.device)
    frontier = seen.to(x.dtype)
    out = g.clone()
    while True:
        reach = torch.zeros_like(frontier).index_add_(0, dst, frontier[src]) > 0
        new = reach & ~seen
        if not bool(new.any()):
            return out
        seen |= new
        frontier = new.to(x.dtype)
        f = torch.zeros_like(f).index_add(0, dst, alpha[:, None] * f[src]) * frontier
        g = g @ weight_a.T
        out = out + f @ g
