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

The third offline set, ``smallworld``, is made to test OGMM's premise that the density shift hurts the
source experts (on ``molecules`` and ``motifs`` the class-defining structure is visible at any density, so
the experts barely degrade off their domain). Its classes are two **networkx** random-graph families whose
difference *changes with density*:

* class 0: a **Watts–Strogatz small world** (``networkx.connected_watts_strogatz_graph``: a ring lattice in
  which each of ``n ~ U{n_min..n_max}`` nodes is joined to its ``k`` nearest neighbours, each edge rewired
  with probability ``p = 0.1``; ``n · k / 2`` edges);
* class 1: an **Erdős–Rényi** graph with the same ``n`` and the same number of edges
  (``networkx.gnm_random_graph``), so that density carries no label information;
* ``k ~ U{2, 4, 6, 8}``, i.e. exactly ``k / 2 ∈ {1, 2, 3, 4}`` edges per node; node features: the full
  one-hot degree (slots ``0..n_max − 1``, no cap), the usual featureless-TU convention (REDDIT-BINARY).

The pooled set is split like the TU sets by edge-to-node ratio (:func:`split_by_density`: the lower half,
``k ∈ {2, 4}``, is A; the upper half, ``k ∈ {6, 8}``, is B). What separates the classes moves with the
density: in A the small world is a near-regular ring of degree 2–4 while the random graph has leaves and
isolated nodes; in B the small world sits at degree 5–9 and the random graph spreads over 2–14. An expert
learns the degree slots of its own domain, and the other domain's slots are ones it has (almost) never
seen, so it loses much of its accuracy there (checked by OGMM's shift control), as the paper's experts do
on the TU sets (GCN on PTC: 70.5 in-domain, about 50 off-domain).

Opt-in TU names (``MUTAG``, ``PTC_MR``, ``NCI1``, ``REDDIT-BINARY``) are read in the standard TU format
(:func:`read_tu`, PyG's ``TUDataset``) from ``$ICLR26_DATA/pyg/tu/<NAME>/raw`` (default
``~/.cache/iclr26/pyg/tu/<NAME>/raw``); when the files are absent PyG downloads them there (online only),
and offline the loader fails with one line naming the folder and the files. They are sorted by
edge-to-node ratio: the lower half is A, the upper half B; 30 % of each (random) is held out as the
mixture target (``target="between"``: the middle third is T, the outer thirds A and B).

Graphs are returned as dense, zero-padded batches (:class:`DenseGraphs`) because OGMM's generated graphs
are dense soft adjacencies and the experts use PyG's dense layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
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
    "smallworld_graphs",
    "motif_graphs",
    "read_tu",
    "split_by_density",
    "tu_raw_dir",
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


def tu_raw_dir(name: str) -> Path:
    """Where the TU files of ``name`` are read from: ``$ICLR26_DATA/pyg/tu/<name>/raw`` (without
    ``ICLR26_DATA``: ``~/.cache/iclr26/pyg/tu/<name>/raw``), PyG's ``TUDataset`` layout."""
    return cache_dir() / "pyg" / "tu" / name / "raw"


def read_tu(name: str, max_degree: int = 7) -> DenseGraphs:
    """A TU graph-classification set in the standard TU format, as dense graphs (``domain`` = −1).

    Reads ``<name>_A.txt`` (edges, 1-based node ids), ``<name>_graph_indicator.txt`` (graph id per node) and
    ``<name>_graph_labels.txt`` (label per graph), plus ``<name>_node_labels.txt`` /
    ``<name>_node_attributes.txt`` when present, from :func:`tu_raw_dir` with PyG's ``TUDataset`` (its
    ``read_tu_data``: node labels become one-hot features, graph labels are mapped to ``0..C−1``). When the
    files are absent PyG downloads the archive there (online only); offline this raises one
    :class:`DataError` line naming the folder and the files. Graphs without node features get the one-hot
    degree (capped at ``max_degree``).
    """
    from torch_geometric.datasets import TUDataset
    from torch_geometric.utils import to_dense_adj

    raw = tu_raw_dir(name)
    files = ", ".join(f"{name}_{part}.txt" for part in ("A", "graph_indicator", "graph_labels"))
    local = all((raw / f"{name}_{part}.txt").is_file() for part in ("A", "graph_indicator"))
    try:
        ds = TUDataset(str(raw.parent.parent), name)
    except Exception as err:  # download errors come as many types (URLError, OSError, HTTPError...)
        why = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        if local:
            raise DataError(f"{name} under {raw}: the TU files could not be read ({why})") from None
        raise DataError(
            f"data set {name!r}: no TU files in {raw} (expected {files}) and PyG could not download them ({why}); "
            f"connect to the internet once, or unzip {name}.zip from the TU collection there "
            f"(ICLR26_DATA sets the root: $ICLR26_DATA/pyg/tu/{name}/raw)"
        ) from None
    graphs = [ds[i] for i in range(len(ds))]
    if len(graphs) < 1:
        raise DataError(f"{name} under {raw}: no graphs in {name}_graph_indicator.txt")
    if any(g.y is None for g in graphs):  # pyright: ignore[reportAttributeAccessIssue]
        raise DataError(f"{name} under {raw}: no graph labels ({name}_graph_labels.txt is missing)")
    n_max = max(int(g.num_nodes) for g in graphs)  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]
    num_feats = int(ds.num_node_features)
    xs, adjs, masks, ys = [], [], [], []
    for g in graphs:
        n = int(g.num_nodes)  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]
        a = to_dense_adj(g.edge_index, max_num_nodes=n_max)[0].clamp(max=1)  # pyright: ignore[reportAttributeAccessIssue, reportArgumentType]
        a = torch.maximum(a, a.t())  # TU edge lists hold both directions; be safe with one-directional files
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
        raise DataError(f"{name} under {raw}: negative class ids in the TU labels")
    if not bool(torch.isfinite(x).all()):
        raise DataError(f"{name} under {raw}: node features hold NaN or infinite values")
    return DenseGraphs(x, adj, mask, y, torch.full_like(y, -1))


def _tu_domains(name: str, target: Target, seed: int, max_degree: int) -> DomainSplit:
    allg = read_tu(name, max_degree)
    raw = tu_raw_dir(name)
    if len(allg) < 10:
        raise DataError(f"{name} under {raw}: {len(allg)} graphs, expected at least 10 to split by density")
    if int(allg.y.unique().numel()) < 2:
        raise DataError(f"{name} under {raw}: the labels hold one class, expected at least 2")
    return split_by_density(allg, target, seed, 1 / 3 if target == "between" else 0.3, int(allg.x.size(-1)))


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


#: smallworld: lattice degrees k of the Watts–Strogatz graphs (edges per node k / 2) and rewiring probability.
SMALLWORLD_K: tuple[int, ...] = (2, 4, 6, 8)
SMALLWORLD_REWIRE = 0.1


def smallworld_graphs(
    num_graphs: int,
    generator: torch.Generator,
    *,
    nodes: tuple[int, int] = (12, 20),
    lattice_k: tuple[int, ...] = SMALLWORLD_K,
    rewire: float = SMALLWORLD_REWIRE,
) -> DenseGraphs:
    """``num_graphs`` graphs with balanced labels: Watts–Strogatz small worlds (class 0) and Erdős–Rényi
    graphs with the same node and edge counts (class 1), ``n ~ U{nodes}``, ``k ~ U{lattice_k}``; features
    ``[G, N, nodes[1]]`` one-hot degree (no cap), ``N = nodes[1]``. Seeded by ``generator`` only."""
    import networkx as nx

    if num_graphs < 1:
        raise GraphInputError(f"num_graphs = {num_graphs}: expected >= 1")
    if not lattice_k or min(lattice_k) < 2 or max(lattice_k) >= nodes[0]:
        raise GraphInputError(f"lattice_k = {lattice_k}: expected lattice degrees in 2..{nodes[0] - 1} (< min nodes)")
    n_max = nodes[1]
    labels = torch.arange(num_graphs) % 2
    labels = labels[torch.randperm(num_graphs, generator=generator)]
    adj = torch.zeros(num_graphs, n_max, n_max)
    mask = torch.zeros(num_graphs, n_max, dtype=torch.bool)
    for g in range(num_graphs):
        n = int(torch.randint(nodes[0], nodes[1] + 1, (1,), generator=generator))
        k = lattice_k[int(torch.randint(0, len(lattice_k), (1,), generator=generator))]
        nx_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        graph = nx.connected_watts_strogatz_graph(n, k, rewire, tries=1000, seed=nx_seed)
        if int(labels[g]) == 1:
            graph = nx.gnm_random_graph(n, graph.number_of_edges(), seed=nx_seed)
        if graph.number_of_edges():
            e = torch.tensor(list(graph.edges())).t()
            adj[g, e[0], e[1]] = 1.0
            adj[g, e[1], e[0]] = 1.0
        mask[g, :n] = True
    x = degree_features(adj, mask, n_max - 1)
    return DenseGraphs(x, adj, mask, labels, torch.full((num_graphs,), -1, dtype=torch.long))


def _smallworld_domains(
    per_domain: int, target_size: int, target: Target, seed: int, nodes: tuple[int, int]
) -> DomainSplit:
    total = 2 * per_domain + target_size
    allg = smallworld_graphs(total, torch.Generator().manual_seed(seed), nodes=nodes)
    return split_by_density(allg, target, seed, target_size / total, int(allg.x.size(-1)))


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
    """The source domains A, B and the target T of ``dataset`` (``molecules``, ``smallworld`` or ``motifs``
    offline, or a TU name). ``molecules`` and ``smallworld``: ``2 · per_domain + target_size`` graphs split
    by density (each source keeps about ``per_domain`` graphs, a fifth of them as its in-domain test set);
    ``nodes`` applies to ``motifs`` and ``smallworld``; ``density_*`` and ``max_degree`` to ``motifs`` only
    (``max_degree`` also to TU sets without node features)."""
    if dataset == "molecules":
        return _molecule_domains(per_domain, target_size, target, seed)
    if dataset == "smallworld":
        return _smallworld_domains(per_domain, target_size, target, seed, nodes)
    if dataset == "motifs":
        return _motif_domains(per_domain, target_size, density_a, density_b, target, seed, nodes, max_degree)
    if dataset in TU_NAMES:
        return _tu_domains(dataset, target, seed, max_degree)
    raise GraphInputError(
        f"dataset = {dataset!r}: expected 'molecules', 'smallworld', 'motifs' or one of {', '.join(TU_NAMES)} "
        "(TU: files under $ICLR26_DATA/pyg/tu)"
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
    "graphs/smallworld",
    lambda **kw: make_domains("smallworld", **kw),
    description="iclr26-graphs graph classification: networkx Watts-Strogatz small worlds vs Erdos-Renyi graphs "
    "of the same size and edge count, one-hot degree features, source/target domains by edge density (offline)",
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
