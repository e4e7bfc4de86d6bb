r"""Adapters that let OGMM merge a user's own pre-trained PyG models and run on a list of ``Data``.

OGMM needs, of every expert, the pooled graph embedding ``h = embed(G)``, the linear classifier head
``(W, b)`` on top of it (the masks scale it, Eq. 12) and the inputs of its BatchNorm layers (R_bn,
Eq. 9); stage 1 differentiates through a *soft* dense adjacency ``Ã``. :class:`PyGExpert` gives a sparse
``torch_geometric`` model that interface: a dense batch ``(x [B, N, d], adj [B, N, N], mask [B, N])`` is
turned into ``(x [n, d], edge_index [2, E], edge_weight [E], batch [n])`` with one arc per nonzero
``adj`` entry between real nodes and ``edge_weight = adj`` (so the gradient reaches ``Ã`` through any
layer that takes edge weights, e.g. ``GCNConv``, ``GraphConv``), and the model's BatchNorm inputs are read
with forward hooks. :func:`graphs_from_data` pads a list of ``Data`` (or a PyG dataset) into the dense
batch the merged model takes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import nn

from iclr26_graphs.data.graph_domains import DenseGraphs
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.methods.ogmm.model import masked_head_logits
from iclr26_shared.models import resolve_class

if TYPE_CHECKING:
    from torch_geometric.data import Data

__all__ = ["PyGExpert", "dense_to_sparse_batch", "expert_from_spec", "graphs_from_data"]

Embed = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def dense_to_sparse_batch(
    x: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x [n, d], edge_index [2, E], edge_weight [E], batch [n])`` of a dense batch: the real nodes in
    order, one arc ``u → v`` per ``adj[g, u, v] > 0`` between real nodes, weighted by that entry."""
    b, n, _ = x.shape
    index = torch.full((b, n), -1, dtype=torch.long, device=x.device)
    index[mask] = torch.arange(int(mask.sum()), device=x.device)
    real = mask[:, :, None] & mask[:, None, :]
    g, u, v = ((adj > 0) & real).nonzero(as_tuple=True)
    edge_index = torch.stack([index[g, u], index[g, v]])
    batch = mask.nonzero(as_tuple=True)[0]
    return x[mask], edge_index, adj[g, u, v], batch


class PyGExpert(nn.Module):
    """A pre-trained sparse PyG graph classifier as an OGMM expert.

    Args:
        model: The user's model (any ``nn.Module``; its parameters are frozen by OGMM).
        in_channels: Its node feature size ``d``.
        embed: ``embed(x, edge_index, edge_weight, batch) -> pooled [B, h]``, the model up to its readout
            (default ``model.embed``). Layers that ignore ``edge_weight`` still run, but then stage 1's
            gradient does not reach the generated edges.
        head: The linear classifier on the pooled embedding (default ``model.head``); logits = head(pooled).
        init: The keyword arguments that rebuild ``model`` as ``type(model)(**init)`` when a merged model over
            it is loaded (default: the model's ``config`` attribute when it is a dict, else none); not needed
            for a model with ``PyTorchModelHubMixin``, which saves and loads itself.

    To be saved inside a :class:`~iclr26_graphs.methods.ogmm.model.MergedGNN`, ``embed`` must be a method
    of ``model``, ``head`` a submodule of it and the model's class defined at module level (see :meth:`spec`).
    """

    def __init__(
        self,
        model: nn.Module,
        in_channels: int,
        *,
        embed: Embed | None = None,
        head: nn.Linear | None = None,
        init: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.model = model
        self.in_channels = in_channels
        config = getattr(model, "config", None)
        self.init: dict[str, Any] = (
            dict(init) if init is not None else (dict(config) if isinstance(config, dict) else {})
        )
        fn = embed if embed is not None else getattr(model, "embed", None)
        lin = head if head is not None else getattr(model, "head", None)
        if not callable(fn):
            raise GraphInputError(f"PyGExpert: {type(model).__name__} has no embed(x, edge_index, edge_weight, batch)")
        if not isinstance(lin, nn.Linear):
            raise GraphInputError(f"PyGExpert: {type(model).__name__} has no linear head (pass head=...)")
        self._embed = fn
        self.head = lin
        # a plain list, not a ModuleList: the BatchNorms stay registered once, under the model (one state-dict name)
        self.bns: list[nn.Module] = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]

    def spec(self) -> dict[str, Any]:
        """How a saved merged model rebuilds this expert (its ``config.json`` entry): the model's class
        ``module:QualName``, whether it saves itself (``PyTorchModelHubMixin``), its ``init`` arguments, the
        names of its ``embed`` method and ``head`` submodule, ``in_channels``. One-line
        :class:`GraphInputError` when it cannot be rebuilt (a class defined in a function, an ``embed`` that
        is not a method of the model, a ``head`` outside it)."""
        from huggingface_hub import PyTorchModelHubMixin

        cls = type(self.model)
        name = cls.__name__
        if "<locals>" in cls.__qualname__:
            raise GraphInputError(
                f"PyGExpert: {name} is defined inside a function; define it at module level so a saved merged "
                "model can import it"
            )
        fn = self._embed
        if getattr(fn, "__self__", None) is not self.model:
            raise GraphInputError(f"PyGExpert: to be saved, embed must be a method of the {name} model")
        head = next((n for n, m in self.model.named_modules() if m is self.head and n), None)
        if head is None:
            raise GraphInputError(f"PyGExpert: to be saved, head must be a submodule of the {name} model")
        return {
            "kind": "pyg",
            "class": f"{cls.__module__}:{cls.__qualname__}",
            "hub": isinstance(self.model, PyTorchModelHubMixin),
            "init": self.init,
            "embed": cast(Any, fn).__name__,
            "head": head,
            "in_channels": self.in_channels,
        }

    def embed(self, x: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Pooled embedding ``[B, h]`` and every BatchNorm's input (in :attr:`bns` order)."""
        seen: dict[int, torch.Tensor] = {}
        hooks = [
            bn.register_forward_pre_hook(lambda m, args: seen.__setitem__(id(m), args[0]) and None) for bn in self.bns
        ]
        try:
            xs, edge_index, edge_weight, batch = dense_to_sparse_batch(x, adj, mask)
            pooled = cast(torch.Tensor, self._embed(xs, edge_index, edge_weight, batch))
        finally:
            for h in hooks:
                h.remove()
        if pooled.size(0) != x.size(0):
            raise GraphInputError(f"PyGExpert: embed returned {pooled.size(0)} graph rows for a batch of {x.size(0)}")
        return pooled, [seen[id(bn)] for bn in self.bns if id(bn) in seen]

    def forward(
        self,
        x: torch.Tensor,
        adj: torch.Tensor,
        mask: torch.Tensor,
        mask_w: torch.Tensor | None = None,
        mask_b: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits ``[B, C]`` (the head scaled by ``mask_w``, ``mask_b`` when given)."""
        pooled, _ = self.embed(x, adj, mask)
        return masked_head_logits(self.head, pooled, mask_w, mask_b)


def expert_from_spec(
    spec: dict[str, Any], folder: str | Path, *, trust: bool = False, classes: Iterable[type] = ()
) -> PyGExpert:
    """The :class:`PyGExpert` that :meth:`PyGExpert.spec` describes, rebuilt with ``from_pretrained(folder)``
    (``PyTorchModelHubMixin``) or ``Class(**init)``. The class is found by
    :func:`iclr26_shared.models.resolve_class`: one of ``classes`` with the same ``module:QualName`` (or,
    failing that, the same ``QualName``), else imported from its module when that is already imported or
    one of this workspace's packages (or ``trust``), never from the current directory or the saved folder;
    one-line :class:`GraphInputError` when it cannot be."""
    path = str(spec.get("class", "?"))
    cls = resolve_class(
        path,
        classes=tuple(classes),
        trust=trust,
        base=nn.Module,
        error=GraphInputError,
        what="expert class",
        refused="expert class {path} (named in config.json) is not imported: import {module} first, pass the "
        "class (from_pretrained(dir, expert_classes=[...])) or trust_expert_classes=True to import it",
        unsafe=(Path(folder), Path(folder).parent.parent),  # experts/<i>/ and the saved model's folder
    )
    try:
        model = cls.from_pretrained(folder) if spec.get("hub") else cls(**spec.get("init", {}))  # pyright: ignore[reportAttributeAccessIssue]
        embed = getattr(model, spec["embed"])
        head = model.get_submodule(spec["head"])
    except (TypeError, ValueError, OSError, AttributeError, KeyError) as err:
        how = (
            f"{cls.__name__}.from_pretrained({folder})" if spec.get("hub") else f"{cls.__name__}(**{spec.get('init')})"
        )
        raise GraphInputError(f"cannot rebuild the expert {path} with {how}: {' '.join(str(err).split())}") from None
    return PyGExpert(model, int(spec["in_channels"]), embed=embed, head=cast(nn.Linear, head), init=spec.get("init"))


def graphs_from_data(graphs: Iterable[Data] | Any, *, num_nodes: int | None = None) -> DenseGraphs:
    """A list of ``torch_geometric.data.Data`` (or a PyG dataset) with ``x``, ``edge_index`` and a graph
    label ``y`` as one padded :class:`DenseGraphs` (symmetric 0/1 adjacency, zero diagonal)."""
    items: list[Any] = list(graphs)
    if not items:
        raise GraphInputError("graphs_from_data: no graph given")
    n = num_nodes or max(int(d.num_nodes) for d in items)
    d0 = items[0].x
    if not isinstance(d0, torch.Tensor):
        raise GraphInputError("graphs_from_data: the graphs need node features x")
    xs = torch.zeros(len(items), n, d0.size(1))
    adj = torch.zeros(len(items), n, n)
    mask = torch.zeros(len(items), n, dtype=torch.bool)
    ys = torch.zeros(len(items), dtype=torch.long)
    for i, d in enumerate(items):
        k = int(d.num_nodes)
        if k > n or d.x is None or d.x.size(1) != d0.size(1):
            shape = None if d.x is None else tuple(d.x.shape)
            raise GraphInputError(f"graphs_from_data: graph {i} has {k} nodes (at most {n}) and features {shape}")
        xs[i, :k] = d.x.float()
        ei = d.edge_index
        adj[i, ei[0], ei[1]] = 1.0
        adj[i, ei[1], ei[0]] = 1.0
        mask[i, :k] = True
        ys[i] = int(d.y.view(-1)[0]) if d.y is not None else -1
    idx = torch.arange(n)
    adj[:, idx, idx] = 0.0
    return DenseGraphs(
        xs.to(d0.device), adj.to(d0.device), mask.to(d0.device), ys.to(d0.device), torch.full_like(ys, -1)
    )
