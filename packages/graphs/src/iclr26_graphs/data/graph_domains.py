r"""Graph-classification domains split by edge density (for OGMM, Wang et al., ICLR 2026).

The paper splits TU graph-classification sets (MUTAG, PTC, NCI1, REDDIT-BINARY) by the **edge-to-node
ratio** into two source domains A (sparse) and B (dense) and a target domain T. No TU set ships offline.

The default data set ``molecules`` (offline) holds real molecule graphs from the G2 collection that ships
in the ``ase`` wheel plus seeded substituted derivatives of them, labelled by a chemical property (is the
molecule a hydrogen-bond donor), see :mod:`iclr26_graphs.data.molecules`. It is split like the TU sets
(:func:`split_by_density`). With explicit hydrogens an acyclic molecule of ``n`` atoms has ``(n − 1)/n``
edges per node and every ring adds ``1/n``, so on molecules the density split separates small acyclic
molecules (A) from larger and ring-bearing ones (B).

The second offline set, ``motifs``, is made by a seeded generator (our choice; written here in torch, no
new dependency), in the spirit of the BA-2Motifs benchmark of the GNN-explainability literature:

* a base Erdős–Rényi graph on ``n ~ U{n_min..n_max}`` nodes with ``m = round(r · n)`` distinct edges,
  where ``r`` (edges per node, the paper's split variable) is drawn from the domain's density range;
* one motif attached to a random base node by one edge: a **house** (class 0: a 4-cycle with a roof,
  6 edges) or a **5-cycle** (class 1);
* node features: one-hot degree, capped (``deg ≥ max_degree`` share the last slot), the usual featureless
  TU convention (REDDIT, IMDB).

Domains: A draws ``r`` from ``density_a``, B from ``density_b``; the target is either a fresh **mixture**
of A-like and B-like graphs (half each: the paper's assumption ``P_T = Σ_i α_i P_i``) or graphs of a
density **between** the two ranges. The density shift changes the degree features and the number of
distracting base cycles, so an expert trained on one side loses accuracy on the other.

Opt-in TU names (``MUTAG``, ``PTC_MR``, ``NCI1``, ``REDDIT-BINARY``) download through PyG's ``TUDataset``
into ``$ICLR26_DATA/pyg`` (default ``~/.cache/iclr26/pyg``) and fail offline with a clear message. They
are sorted by edge-to-node ratio: the lower half is A, the upper half B; 30 % of each (random) is held out
as the mixture target (``target="between"``: the middle third is T, the outer thirds A and B).

Graphs are returned as dense, zero-padded batches (:class:`DenseGraphs`) because OGMM's generated graphs
are dense soft adjacencies and the experts use PyG's dense layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from iclr26_graphs.errors import GraphInputError
from iclr26_shared.data import cache_dir, register_dataset
from iclr26_shared.errors import DataError

__all__ = [
    "TU_NAMES",
    "DenseGraphs",
    "DomainSplit",
    "molecule_graphs",
    "motif_graph",
    "motif_graphs",
    "split_by_density",
    "degree_features",
    "make_domains",
]

TU_NAMES: tuple[str, ...] = ("MUTAG", "PTC_MR", "NCI1", "REDDIT-BINARY")
Target = Literal["mixture", "between"]

_HOUSE = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (1, 4)]
_CYCLE5 = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]


@dataclass
class DenseGraphs:
    """A batch of graphs as dense tensors.

    Attributes:
        x: ``[G, N, d]`` node features (zero rows at padding).
        adj: ``[G, N, N]`` symmetric adjacency, zero diagonal (hard 0/1, or soft in ``[0, 1]``).
        mask: ``[G, N]`` bool, True at real nodes.
        y: ``[G]`` class ids.
        domain: ``[G]`` domain ids (0 = A, 1 = B, −1 = unknown), for diagnostics only.
    """

    x: torch.Tensor
    adj: torch.Tensor
    mask: torch.Tensor
    y: torch.Tensor
    domain: torch.Tensor

    def __post_init__(self) -> None:
        g, n = self.mask.shape
        if self.x.dim() != 3 or self.x.shape[:2] != (g, n):
            raise GraphInputError(f"DenseGraphs: x must be [G, N, d] = [{g}, {n}, d], got {tuple(self.x.shape)}")
        if self.adj.shape != (g, n, n):
            raise GraphInputError(f"DenseGraphs: adj must be [G, N, N] = [{g}, {n}, {n}], got {tuple(self.adj.shape)}")
        if self.y.shape != (g,) or self.domain.shape != (g,):
            raise GraphInputError(f"DenseGraphs: y and domain must be [G] = [{g}]")
        if not bool(torch.isfinite(self.x).all()) or not bool(torch.isfinite(self.adj).all()):
            raise GraphInputError("DenseGraphs: x and adj must be finite")

    def __len__(self) -> int:
        return int(self.y.numel())

    def subset(self, idx: torch.Tensor) -> DenseGraphs:
        """The graphs ``idx`` (a LongTensor or bool mask)."""
        return DenseGraphs(self.x[idx], self.adj[idx], self.mask[idx], self.y[idx], self.domain[idx])

    def to(self, device: torch.device | str) -> DenseGraphs:
        """The same graphs on ``device``."""
        return DenseGraphs(*(t.to(device) for t in (self.x, self.adj, self.mask, self.y, self.domain)))

    @property
    def density(self) -> torch.Tensor:
        """``[G]`` edges per node (the paper's split variable)."""
        return self.adj.sum((1, 2)) / 2 / self.mask.sum(1).clamp(min=1)

    @staticmethod
    def cat(parts: list[DenseGraphs]) -> DenseGraphs:
        """Concatenate batches (padding to the largest N)."""
        n = max(p.mask.size(1) for p in parts)

        xs, adjs, masks = [], [], []
        for p in parts:
            extra = n - p.mask.size(1)
            xs.append(F.pad(p.x, (0, 0, 0, extra)))
            adjs.append(F.pad(p.adj, (0, extra, 0, extra)))
            masks.append(F.pad(p.mask, (0, extra)))
        return DenseGraphs(
            torch.cat(xs),
            torch.cat(adjs),
            torch.cat(masks),
            torch.cat([p.y for p in parts]),
            torch.cat([p.domain for p in parts]),
        )


def degree_features(adj: torch.Tensor, mask: torch.Tensor, max_degree: int) -> torch.Tensor:
    """``[G, N, max_degree + 1]`` one-hot degree (capped), zero at padding."""
    deg = adj.sum(-1).round().long().clamp(max=max_degree)
    return F.one_hot(deg, max_degree + 1).float() * mask[..., None]


def motif_graph(num_base: int, ratio: float, label: int, generator: torch.Generator) -> torch.Tensor:
    """Edges ``[2, E]`` (each once) of one graph: an ER base with ``round(ratio · num_base)`` edges plus
    a house (label 0) or 5-cycle (label 1) motif on nodes ``num_base..num_base+4`` hung on a random base node."""
    if num_base < 2:
        raise GraphInputError(f"num_base = {num_base}: the base graph needs at least 2 nodes")
    if label not in (0, 1):
        raise GraphInputError(f"label = {label}: the motif data set has the classes 0 (house) and 1 (5-cycle)")
    pairs = torch.triu_indices(num_base, num_base, 1)
    m = min(round(ratio * num_base), pairs.size(1))
    base = pairs[:, torch.randperm(pairs.size(1), generator=generator)[:m]]
    motif = torch.tensor(_HOUSE if label == 0 else _CYCLE5).t() + num_base
    anchor = int(torch.randint(0, num_base, (1,), generator=generator))
    hook = torch.tensor([[anchor], [num_base]])
    return torch.cat([base, motif, hook], 1)


def motif_graphs(
    num_graphs: int,
    density: tuple[float, float],
    generator: torch.Generator,
    *,
    nodes: tuple[int, int] = (12, 20),
    max_degree: int = 7,
    domain: int = -1,
) -> DenseGraphs:
    """``num_graphs`` motif graphs with balanced labels and edges-per-node ratio ``~ U[density]``."""
    if num_graphs < 1:
        raise GraphInputError(f"num_graphs = {num_graphs}: expected >= 1")
    lo, hi = density
    if not 0 <= lo <= hi:
        raise GraphInputError(f"density = {density}: expected 0 <= low <= high")
    n_max = nodes[1] + 5
    labels = torch.arange(num_graphs) % 2
    labels = labels[torch.randperm(num_graphs, generator=generator)]
    adj = torch.zeros(num_graphs, n_max, n_max)
    mask = torch.zeros(num_graphs, n_max, dtype=torch.bool)
    for g in range(num_graphs):
        n = int(torch.randint(nodes[0], nodes[1] + 1, (1,), generator=generator))
        r = lo + (hi - lo) * float(torch.rand((), generator=generator))
        e = motif_graph(n, r, int(labels[g]), generator)
        adj[g, e[0], e[1]] = 1.0
        adj[g, e[1], e[0]] = 1.0
        mask[g, : n + 5] = True
    x = degree_features(adj, mask, max_degree)
    return DenseGraphs(x, adj, mask, labels, torch.full((num_graphs,), domain, dtype=torch.long))


@dataclass
class DomainSplit:
    """Sources A and B (train + held-out in-domain test) and the target T."""

    a_train: DenseGraphs
    a_test: DenseGraphs
    b_train: DenseGraphs
    b_test: DenseGraphs
    target: DenseGraphs
    num_classes: int
    num_features: int


def _motif_domains(
    per_domain: int,
    target_size: int,
    density_a: tuple[float, float],
    density_b: tuple[float, float],
    target: Target,
    seed: int,
    nodes: tuple[int, int],
    max_degree: int,
) -> DomainSplit:
    gen = torch.Generator().manual_seed(seed)
    test = max(per_domain // 4, 2)
    kw = {"nodes": nodes, "max_degree": max_degree}
    a_train = motif_graphs(per_domain, density_a, gen, domain=0, **kw)
    a_test = motif_graphs(test, density_a, gen, domain=0, **kw)
    b_train = motif_graphs(per_domain, density_b, gen, domain=1, **kw)
    b_test = motif_graphs(test, density_b, gen, domain=1, **kw)
    if target == "mixture":
        half = max(target_size // 2, 1)
        tgt = DenseGraphs.cat(
            [
                motif_graphs(half, density_a, gen, domain=0, **kw),
                motif_graphs(target_size - half, density_b, gen, domain=1, **kw),
            ]
        )
    else:
        tgt = motif_graphs(target_size, (density_a[1], density_b[0]), gen, domain=-1, **kw)
    return DomainSplit(a_train, a_test, b_train, b_test, tgt, 2, max_degree + 1)


def _tu_domains(name: str, target: Target, seed: int, max_degree: int) -> DomainSplit:
    from torch_geometric.datasets import TUDataset
    from torch_geometric.utils import to_dense_adj

    root = cache_dir() / "pyg" / "tu"
    try:
        ds = TUDataset(str(root), name)
    except Exception as err:  # download errors come as many types (URLError, OSError, HTTPError...)
        raise DataError(
            f"data set {name!r} is not cached under {root} and PyG could not download it ({type(err).__name__}: "
            f"{err}); connect to the internet once or set ICLR26_DATA to a directory holding pyg/tu/{name}"
        ) from None
    graphs = [ds[i] for i in range(len(ds))]
    if len(graphs) < 10:
        raise DataError(f"{name} under {root}: {len(graphs)} graphs, expected at least 10 to split by density")
    n_max = max(int(g.num_nodes) for g in graphs)  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]
    num_feats = int(ds.num_node_features)
    xs, adjs, masks, ys = [], [], [], []
    for g in graphs:
        n = int(g.num_nodes)  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]
        a = to_dense_adj(g.edge_index, max_num_nodes=n_max)[0].clamp(max=1)  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]
        a.fill_diagonal_(0)
        m = torch.zeros(n_max, dtype=torch.bool)
        m[:n] = True
        adjs.append(a)
        masks.append(m)
        if num_feats:
            xs.append(F.pad(g.x.float(), (0, 0, 0, n_max - n)))  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]
        ys.append(int(g.y))  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]
    adj, mask = torch.stack(adjs), torch.stack(masks)
    x = torch.stack(xs) if num_feats else degree_features(adj, mask, max_degree)
    y = torch.tensor(ys)
    if int(y.min()) < 0:
        raise DataError(f"{name} under {root}: negative class ids in the TU labels")
    if int(y.unique().numel()) < 2:
        raise DataError(f"{name} under {root}: the labels hold one class, expected at least 2")
    if not bool(torch.isfinite(x).all()):
        raise DataError(f"{name} under {root}: node features hold NaN or infinite values")
    allg = DenseGraphs(x, adj, mask, y, torch.full_like(y, -1))
    return split_by_density(allg, target, seed, 1 / 3 if target == "between" else 0.3, int(x.size(-1)))


def split_by_density(
    allg: DenseGraphs, target: Target, seed: int, target_share: float, num_features: int
) -> DomainSplit:
    """The paper's split of a graph set by edge-to-node ratio (stable sort, ties in the given order).

    ``mixture``: the lower half is A, the upper half B, and ``target_share`` of each (random) is held out
    as the target; ``between``: the middle ``target_share`` of the order is T, the outer parts A and B.
    A fifth of A and of B (random) is kept as the in-domain test set.
    """
    order = torch.argsort(allg.density, stable=True)
    gen = torch.Generator().manual_seed(seed)
    g_total = len(allg)
    if target == "between":
        k = (g_total - round(target_share * g_total)) // 2
        a_idx, t_idx, b_idx = order[:k], order[k : g_total - k], order[g_total - k :]
        t_hold_a = t_hold_b = torch.empty(0, dtype=torch.long)
    else:
        half = g_total // 2
        a_idx, b_idx = order[:half], order[half:]
        a_idx = a_idx[torch.randperm(a_idx.numel(), generator=gen)]
        b_idx = b_idx[torch.randperm(b_idx.numel(), generator=gen)]
        ka, kb = int(target_share * a_idx.numel()), int(target_share * b_idx.numel())
        t_hold_a, a_idx = a_idx[:ka], a_idx[ka:]
        t_hold_b, b_idx = b_idx[:kb], b_idx[kb:]
        t_idx = torch.cat([t_hold_a, t_hold_b])
    dom = allg.domain.clone()
    dom[a_idx], dom[b_idx], dom[t_hold_a], dom[t_hold_b] = 0, 1, 0, 1
    allg = DenseGraphs(allg.x, allg.adj, allg.mask, allg.y, dom)

    def train_test(idx: torch.Tensor) -> tuple[DenseGraphs, DenseGraphs]:
        idx = idx[torch.randperm(idx.numel(), generator=gen)]
        k = max(idx.numel() // 5, 1)
        return allg.subset(idx[k:]), allg.subset(idx[:k])

    a_train, a_test = train_test(a_idx)
    b_train, b_test = train_test(b_idx)
    return DomainSplit(a_train, a_test, b_train, b_test, allg.subset(t_idx), int(allg.y.max()) + 1, num_features)


def molecule_graphs(num: int, seed: int) -> DenseGraphs:
    """``num`` class-balanced molecule graphs (:func:`iclr26_graphs.data.molecules.molecule_set`: ase's G2
    molecules plus substituted derivatives; label = hydrogen-bond donor), dense and zero-padded."""
    from iclr26_graphs.data.molecules import molecule_features, molecule_set

    mols = molecule_set(num, seed)
    n_max = max(len(m.symbols) for m in mols)
    feats = [molecule_features(m) for m in mols]
    x = torch.stack([F.pad(f, (0, 0, 0, n_max - f.size(0))) for f in feats])
    adj = torch.zeros(num, n_max, n_max)
    mask = torch.zeros(num, n_max, dtype=torch.bool)
    for g, m in enumerate(mols):
        if m.bonds:
            e = torch.tensor(m.bonds).t()
            adj[g, e[0], e[1]] = 1.0
            adj[g, e[1], e[0]] = 1.0
        mask[g, : len(m.symbols)] = True
    y = torch.tensor([m.label for m in mols])
    return DenseGraphs(x, adj, mask, y, torch.full_like(y, -1))


def _molecule_domains(per_domain: int, target_size: int, target: Target, seed: int) -> DomainSplit:
    total = 2 * per_domain + target_size
    allg = molecule_graphs(total, seed)
    return split_by_density(allg, target, seed, target_size / total, int(allg.x.size(-1)))


def make_domains(
    dataset: str,
    *,
    seed: int,
    per_domain: int = 400,
    target_size: int = 400,
    density_a: tuple[float, float] = (0.5, 1.0),
    density_b: tuple[float, float] = (3.0, 4.0),
    target: Target = "mixture",
    nodes: tuple[int, int] = (12, 20),
    max_degree: int = 7,
) -> DomainSplit:
    """The source domains A, B and the target T of ``dataset`` (``molecules`` or ``motifs`` offline, or a
    TU name). ``molecules``: ``2 · per_domain + target_size`` molecules split by density (each source keeps
    about ``per_domain`` graphs, a fifth of them as its in-domain test set); ``density_*``, ``nodes`` and
    ``max_degree`` apply to ``motifs`` only (``max_degree`` also to TU sets without node features)."""
    if dataset == "molecules":
        return _molecule_domains(per_domain, target_size, target, seed)
    if dataset == "motifs":
        return _motif_domains(per_domain, target_size, density_a, density_b, target, seed, nodes, max_degree)
    if dataset in TU_NAMES:
        return _tu_domains(dataset, target, seed, max_degree)
    raise GraphInputError(
        f"dataset = {dataset!r}: expected 'molecules', 'motifs' or one of {', '.join(TU_NAMES)} (TU: downloaded)"
    )


register_dataset(
    "graphs/molecules",
    lambda **kw: make_domains("molecules", **kw),
    description="iclr26-graphs graph classification: ase's G2 molecules + seeded substituted derivatives, "
    "label = hydrogen-bond donor (N-H/O-H), split into source/target domains by edge density (offline)",
    offline=True,
    kind="graph-domains",
)
register_dataset(
    "graphs/motifs",
    lambda **kw: make_domains("motifs", **kw),
    description="iclr26-graphs graph classification: generated ER graphs with a house / 5-cycle motif, "
    "source/target domains by edge density (offline)",
    offline=True,
    kind="graph-domains",
)
