r"""The FGL model (tree fuser over a homophily-guided forest) and the GCN / APPNP / GCNII baselines.

FGL's tree fuser (Li et al., ICLR 2026, the "tree fuser" of the method section):

.. math::
    H &= \big( \beta_1 \hat A_{\hat G} + \beta_2 \alpha + (1 - \beta_1 - \beta_2) I \big)^{K_L} X W_H
        && \text{(local sub-module)} \\
    H' &= \operatorname{Mean}_k \operatorname{RowNorm}_{L2}\big( f^{(T_k)}(H) \big)
        && \text{(global sub-module, } T_k \sim P_{\hat G}\text{)} \\
    H'' &= (1 - \gamma) H' + \gamma H, \qquad \hat y = H'' W_C,

with ``Â_Ĝ`` the GCN-normalised adjacency (self-loops added) of the augmented graph Ĝ and ``α`` the
homophily estimator's attention matrix on Ĝ. All graph-side quantities (Ĝ, α, the trees) are fixed by
the pre-processing and held in an :class:`FGLStructure`; only ``W_H``, ``W_A``, ``W_B``, ``W_C`` train.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.nn.forest_conv import Direction, Forest, ForestConv, make_forest

Modules = Literal["both", "global", "local"]

__all__ = [
    "APPNPNet",
    "FGL",
    "FGLStructure",
    "GCNIINet",
    "GCNNet",
    "LinearNet",
    "MLPNet",
    "Modules",
    "gcn_norm_weights",
    "graph_fingerprint",
    "make_baseline",
]

#: File beside ``model.safetensors`` that holds a saved FGL's structure (Ĝ, α and the sampled trees).
STRUCTURE_FILE = "structure.safetensors"


def gcn_norm_weights(edge_index: torch.Tensor, num_nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``Â = D^{-1/2} (A + I) D^{-1/2}`` as arcs ``(edge_index with self-loops, weights)``."""
    loops = torch.arange(num_nodes, device=edge_index.device)
    ei = torch.cat([edge_index, torch.stack([loops, loops])], 1)
    deg = torch.bincount(ei[1], minlength=num_nodes).double()
    w = deg[ei[0]].rsqrt() * deg[ei[1]].rsqrt()
    return ei, w.float()


def _undirected_keys(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Sorted unique ``min(u, v) · n + max(u, v)`` of the non-loop edges (direction and duplicates ignored)."""
    e = edge_index[:, edge_index[0] != edge_index[1]]
    return torch.unique(torch.minimum(e[0], e[1]) * num_nodes + torch.maximum(e[0], e[1]))


def graph_fingerprint(edge_index: torch.Tensor, num_nodes: int) -> str:
    """SHA-256 of the undirected simple graph ``edge_index`` on ``num_nodes`` nodes (arc direction,
    duplicates and self-loops ignored): what an :class:`FGLStructure` records of the graph it was built on."""
    import hashlib

    keys = _undirected_keys(edge_index.detach().long().cpu(), num_nodes)
    digest = hashlib.sha256(str(num_nodes).encode())
    digest.update(keys.numpy().astype("<i8").tobytes())
    return digest.hexdigest()


def _spmm(edge_index: torch.Tensor, weight: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``(M h)_i = Σ_{arcs (j, i)} w · h_j``."""
    return torch.zeros_like(h).index_add(0, edge_index[1], weight[:, None].to(h.dtype) * h[edge_index[0]])


@dataclass(frozen=True)
class FGLStructure:
    """The pre-processed graph side of FGL (see :func:`iclr26_graphs.methods.fgl.preprocess.build_structure`).

    Attributes:
        num_nodes: ``n``.
        edge_index: ``[2, E']``: arcs of the augmented graph Ĝ (both directions, no self-loops),
            ``(source j, target i)``.
        attention: ``[E']``: ``α_{i→j}`` (target attends to source; sums to 1 over a target's arcs).
        forest: ``N_T`` spanning forests of Ĝ, rooted at their centroids.
        graph: :func:`graph_fingerprint` of the input graph G the structure was built on (None when
            unknown, e.g. a structure file written before it was recorded).
    """

    num_nodes: int
    edge_index: torch.Tensor
    attention: torch.Tensor
    forest: Forest
    graph: str | None = None

    def check_graph(self, edge_index: torch.Tensor) -> None:
        """A one-line :class:`GraphInputError` unless ``edge_index`` is the graph this structure was built
        on (its fingerprint; without one, every edge must be an edge of Ĝ)."""
        if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= self.num_nodes):
            raise GraphInputError(
                f"edge_index holds node ids outside [0, {self.num_nodes}), the nodes of the graph FGL's forest was "
                "sampled on (FGL is transductive): call model.resample(data) to rebuild it for this graph"
            )
        if self.graph is not None:
            same = graph_fingerprint(edge_index, self.num_nodes) == self.graph
        else:
            known = _undirected_keys(self.edge_index, self.num_nodes)
            same = bool(torch.isin(_undirected_keys(edge_index, self.num_nodes), known).all())
        if not same:
            raise GraphInputError(
                "edge_index is not the graph FGL's forest was sampled on (FGL is transductive): call "
                "model.resample(data) to rebuild the structure for this graph, or forward without edge_index"
            )

    def to(self, device: torch.device | str) -> FGLStructure:
        """The same structure on ``device``."""
        device = torch.device(device)
        return FGLStructure(
            self.num_nodes,
            self.edge_index.to(device),
            self.attention.to(device),
            make_forest(self.edge_index.to(device), self.num_nodes, self.forest.trees.to(device)),
            self.graph,
        )

    def permute(self, perm: torch.Tensor) -> FGLStructure:
        """The structure of the graph whose node ``i`` is node ``perm[i]`` of this one."""
        inv = torch.empty_like(perm)
        inv[perm] = torch.arange(perm.numel(), device=perm.device)
        ei = inv[self.edge_index]
        trees = inv[self.forest.trees]
        return FGLStructure(self.num_nodes, ei, self.attention.clone(), make_forest(ei, self.num_nodes, trees))

    def with_trees(self, trees: torch.Tensor) -> FGLStructure:
        """The same Ĝ and attention with other trees ``[N_T, 2, m]``."""
        return replace(self, forest=make_forest(self.edge_index, self.num_nodes, trees))

    def save(self, path: str | Path) -> None:
        """Write Ĝ (``edge_index [2, E']``), ``attention [E']``, the trees ``[N_T, 2, m]`` and ``n`` to one
        safetensors file; :meth:`load` rebuilds the identical structure (the forest's rooting is
        deterministic given the trees)."""
        from safetensors.torch import save_file

        tensors = {
            "edge_index": self.edge_index.detach().cpu().contiguous(),
            "attention": self.attention.detach().cpu().contiguous(),
            "trees": self.forest.trees.detach().cpu().contiguous(),
        }
        meta = {"num_nodes": str(self.num_nodes)} | ({"graph": self.graph} if self.graph else {})
        save_file(tensors, str(path), metadata=meta)

    @classmethod
    def load(cls, path: str | Path, device: torch.device | str = "cpu") -> FGLStructure:
        """The structure :meth:`save` wrote to ``path``, on ``device``."""
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
            if "num_nodes" not in meta:
                raise GraphInputError(f"{path}: not an FGL structure file (no num_nodes in its metadata)")
            t = {k: f.get_tensor(k) for k in ("edge_index", "attention", "trees")}
        n = int(meta["num_nodes"])
        ei = t["edge_index"].to(device)
        forest = make_forest(ei, n, t["trees"].to(device))
        return cls(n, ei, t["attention"].to(device), forest, meta.get("graph"))


class FGL(nn.Module, PyTorchModelHubMixin):
    """Forest-based graph learning for semi-supervised node classification.

    Save and load with ``save_pretrained(dir)`` / ``FGL.from_pretrained(dir)`` (``huggingface_hub``'s
    :class:`~huggingface_hub.PyTorchModelHubMixin`, offline from a local folder): the weights go to
    ``model.safetensors``, the constructor arguments to ``config.json`` and, when a structure is set, the
    graph side (Ĝ, α and the sampled trees, :meth:`FGLStructure.save`) to ``structure.safetensors``, so a
    loaded model gives the saved one's outputs bit for bit.

    Args:
        in_channels: Feature size ``f``.
        out_channels: Number of classes ``C``.
        hidden_channels: ``d`` (size of ``H``).
        num_trees: ``N_T``.
        beta1, beta2: Weights of ``Â_Ĝ`` and ``α`` in the local propagation (``β1 + β2 ≤ 1``).
        k_local: ``K_L``, propagation steps of the local sub-module.
        gamma: ``γ``, the weight of the local ``H`` in ``H''``.
        dropout: Dropout on the input and on ``H''``.
        modules: ``"both"``; ``"global"`` = without the local sub-module (``H = X W_H``); ``"local"`` =
            without the global sub-module (``H'' = H``).
        normalize_tree_weights: Rescale α over each node's tree neighbours (not in the paper; see
            :class:`ForestConv`).
        tree_message: Which attention weights the tree message ``a → b``: ``"receiver"`` (``α_{b→a}``,
            our documented reading) or ``"sender"`` (``α_{a→b}``, Theorem 1's ``α_{v→u}``).

    ``forward(x [n, f], edge_index=None, structure=None) -> logits [n, C]``; the structure is the one set
    by :meth:`set_structure` unless given. FGL is **transductive**: Ĝ, α and the trees are built once, for
    one graph, by the pre-processing, and ``forward`` never reads ``edge_index``; it only checks that it is
    that graph (a different one is a one-line :class:`GraphInputError`). For another graph, call
    :meth:`resample` (the pre-processing again, on that graph, with the trained weights kept).
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        hidden_channels: int = 64,
        num_trees: int = 8,
        beta1: float = 0.3,
        beta2: float = 0.5,
        k_local: int = 2,
        gamma: float = 0.3,
        dropout: float = 0.5,
        modules: Modules = "both",
        normalize_tree_weights: bool = False,
        tree_message: Direction = "receiver",
    ) -> None:
        super().__init__()
        if not (0 <= beta1 and 0 <= beta2 and beta1 + beta2 <= 1):
            raise GraphInputError(f"beta1 = {beta1}, beta2 = {beta2}: need beta1, beta2 >= 0 and beta1 + beta2 <= 1")
        if modules not in ("both", "global", "local"):
            raise GraphInputError(f"modules = {modules!r}: expected 'both', 'global' or 'local'")
        self.beta1, self.beta2, self.k_local, self.gamma = beta1, beta2, k_local, gamma
        self.dropout = dropout
        self.fuser_modules: Modules = modules  # not `modules`: that is nn.Module.modules()
        self.lin_h = nn.Linear(in_channels, hidden_channels)
        self.conv = ForestConv(
            hidden_channels,
            hidden_channels,
            num_trees,
            normalize=normalize_tree_weights,
            direction=tree_message,
            cached=False,
        )
        self.classifier = nn.Linear(hidden_channels, out_channels)
        self.structure: FGLStructure | None = None
        self._norm: tuple[torch.Tensor, torch.Tensor] | None = None

    def _save_pretrained(self, save_directory: Path) -> None:
        super()._save_pretrained(save_directory)
        if self.structure is not None:
            self.structure.save(Path(save_directory) / STRUCTURE_FILE)

    @classmethod
    def _from_pretrained(cls, *, model_id: str, map_location: str = "cpu", **kwargs: Any) -> FGL:  # type: ignore[override]
        model = super()._from_pretrained(model_id=model_id, map_location=map_location, **kwargs)
        assert isinstance(model, FGL)
        path = Path(model_id) / STRUCTURE_FILE
        if path.is_file():
            model.set_structure(FGLStructure.load(path, map_location))
        return model

    def resample(self, data: Any, *, seed: int = 0, **kwargs: Any) -> FGL:
        """Rebuild the structure for the graph ``data`` (a ``Data`` with ``x``, ``edge_index``, ``y``,
        ``train_mask``, ``val_mask``): FGL's pre-processing (pseudo-labels, kNN augmentation, homophily
        estimator, ``N_T`` freshly sampled forests) on that graph, seeded by ``seed``; the trained weights are
        kept. ``kwargs`` go to :func:`~iclr26_graphs.methods.fgl.preprocess.build_structure` (e.g.
        ``knn_k``, ``pseudo_epochs``, ``estimator_epochs``). The caller's global RNG is left as it was.
        Returns self."""
        from iclr26_graphs.methods.fgl.preprocess import build_structure
        from iclr26_shared.seeding import global_rng

        for key in ("x", "edge_index", "y", "train_mask", "val_mask"):
            if getattr(data, key, None) is None:
                raise GraphInputError(f"resample: data has no {key!r} (needs x, edge_index, y, train_mask, val_mask)")
        x = data.x
        with global_rng():
            torch.manual_seed(seed)
            structure, _ = build_structure(
                x,
                data.edge_index,
                data.y,
                data.train_mask,
                data.val_mask,
                num_trees=self.conv.num_trees,
                generator=torch.Generator(device=x.device).manual_seed(seed),
                **kwargs,
            )
        return self.set_structure(structure)

    def set_structure(self, structure: FGLStructure) -> FGL:
        """Use ``structure`` (Ĝ, α, trees) in later calls; returns self."""
        self.structure = structure
        self._norm = gcn_norm_weights(structure.edge_index, structure.num_nodes)
        return self

    def local(self, x: torch.Tensor, s: FGLStructure, norm: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """``H = (β1 Â + β2 α + (1−β1−β2) I)^{K_L} X W_H`` (``X W_H`` alone without the local module)."""
        h = self.lin_h(x)
        if self.fuser_modules == "global":
            return h
        for _ in range(self.k_local):
            h = (
                self.beta1 * _spmm(norm[0], norm[1], h)
                + self.beta2 * _spmm(s.edge_index, s.attention, h)
                + (1 - self.beta1 - self.beta2) * h
            )
        return h

    def forward(
        self, x: torch.Tensor, edge_index: torch.Tensor | None = None, structure: FGLStructure | None = None
    ) -> torch.Tensor:
        s = structure if structure is not None else self.structure
        if s is None:
            raise GraphInputError("FGL has no structure: build one with build_structure(...) and call set_structure")
        if x.dim() != 2 or x.size(0) != s.num_nodes:
            raise GraphInputError(
                f"x has shape {tuple(x.shape)} but FGL's structure was built for a graph of {s.num_nodes} nodes "
                "(FGL is transductive): call model.resample(data) to rebuild it for this graph"
            )
        if not bool(torch.isfinite(x).all()):
            raise GraphInputError("x holds NaN or inf values")
        if edge_index is not None:
            s.check_graph(edge_index)
        norm = (
            self._norm
            if (structure is None and self._norm is not None)
            else gcn_norm_weights(s.edge_index, s.num_nodes)
        )
        x = F.dropout(x, self.dropout, self.training)
        h = self.local(x, s, norm)
        if self.fuser_modules == "local":
            out = h
        else:
            glob = self.conv(h, s.edge_index, s.attention, forest=s.forest)
            out = (1 - self.gamma) * glob + self.gamma * h
        out = F.dropout(out, self.dropout, self.training)
        return self.classifier(out)


class GCNNet(nn.Module):
    """Two-layer GCN (Kipf & Welling) with PyG's ``GCNConv``."""

    def __init__(self, in_channels: int, out_channels: int, hidden: int = 64, dropout: float = 0.5) -> None:
        super().__init__()
        from torch_geometric.nn import GCNConv

        self.conv1 = GCNConv(in_channels, hidden, cached=True)
        self.conv2 = GCNConv(hidden, out_channels, cached=True)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, self.dropout, self.training)
        return self.conv2(x, edge_index)


class APPNPNet(nn.Module):
    """APPNP (Gasteiger et al.): a two-layer MLP, then PyG's ``APPNP`` propagation (``K``, ``α``)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        hidden: int = 64,
        dropout: float = 0.5,
        k: int = 10,
        alpha: float = 0.1,
    ) -> None:
        super().__init__()
        from torch_geometric.nn import APPNP

        self.lin1 = nn.Linear(in_channels, hidden)
        self.lin2 = nn.Linear(hidden, out_channels)
        self.prop = APPNP(k, alpha, cached=True)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(self.lin1(x))
        x = F.dropout(x, self.dropout, self.training)
        return self.prop(self.lin2(x), edge_index)


class GCNIINet(nn.Module):
    """GCNII (Chen et al. 2020) with PyG's ``GCN2Conv`` (initial residual ``α``, identity mapping ``θ``)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        hidden: int = 64,
        dropout: float = 0.5,
        layers: int = 8,
        alpha: float = 0.1,
        theta: float = 0.5,
    ) -> None:
        super().__init__()
        from torch_geometric.nn import GCN2Conv

        self.lin_in = nn.Linear(in_channels, hidden)
        self.convs = nn.ModuleList(GCN2Conv(hidden, alpha, theta, layer=i + 1, cached=True) for i in range(layers))
        self.lin_out = nn.Linear(hidden, out_channels)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        x = F.dropout(x, self.dropout, self.training)
        x = x0 = F.relu(self.lin_in(x))
        for conv in self.convs:
            x = F.dropout(x, self.dropout, self.training)
            x = F.relu(conv(x, x0, edge_index))
        x = F.dropout(x, self.dropout, self.training)
        return self.lin_out(x)


class LinearNet(nn.Module):
    """Feature-only logistic regression ``softmax(X W)`` (dropout on the input); ignores the graph."""

    def __init__(self, in_channels: int, out_channels: int, dropout: float = 0.5) -> None:
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor | None = None) -> torch.Tensor:
        return self.lin(F.dropout(x, self.dropout, self.training))


class MLPNet(nn.Module):
    """Feature-only two-layer MLP (ReLU, dropout); ignores the graph."""

    def __init__(self, in_channels: int, out_channels: int, hidden: int = 64, dropout: float = 0.5) -> None:
        super().__init__()
        self.lin1 = nn.Linear(in_channels, hidden)
        self.lin2 = nn.Linear(hidden, out_channels)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor | None = None) -> torch.Tensor:
        x = F.relu(self.lin1(F.dropout(x, self.dropout, self.training)))
        return self.lin2(F.dropout(x, self.dropout, self.training))


def make_baseline(name: str, in_channels: int, out_channels: int, **kw: float) -> nn.Module:
    """``gcn``, ``appnp``, ``gcnii`` or the feature-only ``mlp`` / ``linear`` with keyword hyper-parameters."""
    if name == "linear":
        return LinearNet(in_channels, out_channels, kw["dropout"])
    if name == "mlp":
        return MLPNet(in_channels, out_channels, int(kw["hidden"]), kw["dropout"])
    if name == "gcn":
        return GCNNet(in_channels, out_channels, hidden=int(kw["hidden"]), dropout=kw["dropout"])
    if name == "appnp":
        return APPNPNet(
            in_channels, out_channels, int(kw["hidden"]), kw["dropout"], k=int(kw["appnp_k"]), alpha=kw["appnp_alpha"]
        )
    if name == "gcnii":
        return GCNIINet(in_channels, out_channels, int(kw["hidden"]), kw["dropout"], layers=int(kw["gcnii_layers"]))
    raise GraphInputError(f"unknown baseline {name!r}: expected gcn, appnp, gcnii, mlp or linear")
