"""Node-classification graphs by name, as ``torch_geometric.data.Data`` with train/val/test masks.

Offline defaults: ``csbm`` (generated, seeded), ``drosophila-left``, ``drosophila-right`` and
``mouse-dti`` (real connectomes in the graspologic wheel). Opt-in names that download through PyG
when online: ``cora``, ``citeseer``, ``pubmed`` (Planetoid, public split), ``cornell``, ``texas``,
``wisconsin`` (WebKB) and ``actor`` (their Geom-GCN split ``split_index``); they are cached under
``$ICLR26_DATA/pyg`` (default ``~/.cache/iclr26/pyg``) and fail offline with a clear message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from iclr26_graphs.data.connectomes import load_drosophila, load_mouse_dti
from iclr26_graphs.data.csbm import CsbmParams, csbm_expected_homophily, sample_csbm
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.graph_names import OFFLINE_GRAPHS, ONLINE_GRAPHS
from iclr26_graphs.ops.homophily import edge_homophily
from iclr26_shared.data import cache_dir, register_dataset
from iclr26_shared.errors import DataError

if TYPE_CHECKING:
    from torch_geometric.data import Data

__all__ = [
    "OFFLINE_GRAPHS",
    "ONLINE_GRAPHS",
    "GraphTensors",
    "graph_tensors",
    "load_graph",
    "make_split",
    "validate_graph",
]


def make_split(
    y: torch.Tensor, train_per_class: int, val_per_class: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random per-class split: ``train_per_class`` and ``val_per_class`` nodes of every class, rest test.

    Small classes are capped so that at most 40 % of a class trains and 20 % validates (at least one
    node each), leaving at least 40 % for testing.
    """
    n = y.numel()
    train = torch.zeros(n, dtype=torch.bool)
    val = torch.zeros(n, dtype=torch.bool)
    for c in torch.unique(y).tolist():
        idx = (y == c).nonzero().flatten()
        idx = idx[torch.randperm(idx.numel(), generator=generator)]
        n_tr = max(1, min(train_per_class, int(0.4 * idx.numel())))
        n_va = max(1, min(val_per_class, int(0.2 * idx.numel())))
        train[idx[:n_tr]] = True
        val[idx[n_tr : n_tr + n_va]] = True
    return train, val, ~(train | val)


def validate_graph(x: torch.Tensor, edge_index: torch.Tensor, y: torch.Tensor | None = None, *, where: str) -> None:
    """Check shapes, dtypes, id ranges and finiteness; raise :class:`GraphInputError` naming ``where``."""
    if x.dim() != 2 or x.size(0) == 0:
        raise GraphInputError(f"{where}: x must be a non-empty [n, f] tensor, got shape {tuple(x.shape)}")
    if not torch.is_floating_point(x) or not bool(torch.isfinite(x).all()):
        raise GraphInputError(f"{where}: x must be floating point without NaN/inf")
    n = x.size(0)
    if edge_index.dim() != 2 or edge_index.size(0) != 2 or edge_index.dtype != torch.long:
        raise GraphInputError(f"{where}: edge_index must be a LongTensor [2, E], got {tuple(edge_index.shape)}")
    if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= n):
        raise GraphInputError(f"{where}: edge_index holds node ids outside [0, {n})")
    if y is not None and (y.shape != (n,) or y.dtype != torch.long or (y.numel() and int(y.min()) < 0)):
        raise GraphInputError(f"{where}: y must be a LongTensor [n] of class ids >= 0")


def _pyg(name: str, split_index: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]]:
    from torch_geometric import datasets as pyg_datasets

    root = cache_dir() / "pyg"
    try:
        if name in ("cora", "citeseer", "pubmed"):
            ds = pyg_datasets.Planetoid(
                str(root / "planetoid"), {"cora": "Cora", "citeseer": "CiteSeer"}.get(name, "PubMed")
            )
        elif name == "actor":
            ds = pyg_datasets.Actor(str(root / "actor"))
        else:
            ds = pyg_datasets.WebKB(str(root / "webkb"), name.capitalize())
        data: Any = ds[0]  # PyG types Dataset.__getitem__ as Dataset | BaseData; index 0 is a Data
    except Exception as err:  # download errors come as many types (URLError, OSError, HTTPError...)
        raise DataError(
            f"data set {name!r} is not cached under {root} and PyG could not download it ({type(err).__name__}: "
            f"{err}); connect to the internet once or set ICLR26_DATA to a directory holding pyg/ with it"
        ) from None
    masks = []
    for key in ("train_mask", "val_mask", "test_mask"):
        m = data[key]
        if m.dim() == 2:
            if not 0 <= split_index < m.size(1):
                raise DataError(f"{name}: split_index {split_index} outside [0, {m.size(1)})")
            m = m[:, split_index]
        masks.append(m.bool())
    return data.x.float(), data.edge_index.long(), data.y.long(), tuple(masks)


class GraphTensors(NamedTuple):
    """The tensors of a graph from :func:`load_graph`, typed (PyG's ``Data`` attributes are untyped)."""

    x: torch.Tensor
    edge_index: torch.Tensor
    y: torch.Tensor
    train_mask: torch.Tensor
    val_mask: torch.Tensor
    test_mask: torch.Tensor


def graph_tensors(data: Data) -> GraphTensors:
    """``(x, edge_index, y, train_mask, val_mask, test_mask)`` of ``data``; a clear error when one is missing."""
    out = []
    for key in GraphTensors._fields:
        value = getattr(data, key, None)
        if not isinstance(value, torch.Tensor):
            raise GraphInputError(f"graph has no tensor {key!r}")
        out.append(value)
    return GraphTensors(*out)


def load_graph(
    name: str,
    *,
    seed: int = 0,
    csbm: CsbmParams | None = None,
    train_per_class: int = 20,
    val_per_class: int = 100,
    split_index: int = 0,
    **options: Any,
) -> Data:
    """Load the node-classification graph ``name`` as ``Data(x, edge_index, y, train/val/test_mask)``.

    Args:
        name: One of :data:`OFFLINE_GRAPHS` or :data:`ONLINE_GRAPHS`.
        seed: Seeds the cSBM draw and the random split of graphs without a standard split.
        csbm: cSBM parameters (default :class:`CsbmParams`), only for ``csbm``.
        train_per_class, val_per_class: The random split (see :func:`make_split`).
        split_index: Which of the standard splits of WebKB/Actor.
        options: ``dim`` (ASE size of the drosophila features), ``topk``/``subject`` for ``mouse-dti``.

    The result also carries ``num_classes``, ``name`` and ``homophily`` (edge homophily, true labels).
    """
    from torch_geometric.data import Data

    gen = torch.Generator().manual_seed(seed)
    masks = None
    if name == "csbm":
        params = csbm or CsbmParams()
        x, edge_index, y = sample_csbm(params, gen)
        extra = {"csbm_phi": params.phi, "expected_homophily": csbm_expected_homophily(params)}
    elif name in ("drosophila-left", "drosophila-right"):
        x, edge_index, y, _ = load_drosophila(name.split("-")[1], dim=int(options.get("dim", 16)))
        extra = {}
    elif name == "mouse-dti":
        x, edge_index, y, _ = load_mouse_dti(str(options.get("subject", "54776")), topk=int(options.get("topk", 10)))
        extra = {}
    elif name in ONLINE_GRAPHS:
        x, edge_index, y, masks = _pyg(name, split_index)
        extra = {}
    else:
        raise DataError(
            f"unknown graph {name!r}; offline: {', '.join(OFFLINE_GRAPHS)}; online: {', '.join(ONLINE_GRAPHS)}"
        )
    validate_graph(x, edge_index, y, where=f"graph {name!r}")
    if masks is None:
        masks = make_split(y, train_per_class, val_per_class, gen)
    data = Data(x=x, edge_index=edge_index, y=y, train_mask=masks[0], val_mask=masks[1], test_mask=masks[2])
    data.num_classes = int(y.max()) + 1
    data.name = name
    data.homophily = edge_homophily(edge_index, y)
    for k, v in extra.items():
        data[k] = v
    return data


for _name in OFFLINE_GRAPHS:
    register_dataset(
        f"graphs/{_name}",
        lambda _n=_name, **kw: load_graph(_n, **kw),
        description=f"iclr26-graphs node classification graph {_name!r} (offline)",
        offline=True,
    )
