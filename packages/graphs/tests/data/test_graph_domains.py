"""OGMM's domain data: the ``smallworld`` generator and the opt-in TU reader (on TU files the test writes)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from iclr26_graphs.data.graph_domains import (
    SMALLWORLD_K,
    make_domains,
    read_tu,
    smallworld_graphs,
    tu_raw_dir,
)
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.methods.ogmm import train as ogmm_train
from iclr26_graphs.methods.ogmm.config import PRESETS, SMALLWORLD_MAX_K, OGMMConfig
from iclr26_shared.data import available_datasets, load_dataset
from iclr26_shared.errors import ConfigError, DataError

# ---- smallworld ----------------------------------------------------------------------------------------


def test_smallworld_classes_share_size_and_edge_count() -> None:
    g = smallworld_graphs(60, torch.Generator().manual_seed(0), nodes=(12, 20))
    n = g.mask.sum(1)
    edges = g.adj.sum((1, 2)) / 2
    assert torch.equal(g.adj, g.adj.transpose(1, 2)) and float(torch.diagonal(g.adj, dim1=1, dim2=2).abs().sum()) == 0
    assert g.y.tolist().count(0) == g.y.tolist().count(1) == 30
    # both classes have exactly n · k / 2 edges for a lattice degree k: density k / 2 carries no label
    ks = (2 * edges / n).tolist()
    assert all(k in SMALLWORLD_K for k in ks)
    assert set(ks) == set(SMALLWORLD_K)
    # features: the full one-hot degree (slots 0..19), zero at padding
    assert g.x.shape == (60, 20, 20)
    deg = g.adj.sum(-1)
    assert torch.equal(g.x.argmax(-1)[g.mask], deg[g.mask].long())
    assert float(g.x[~g.mask].abs().sum()) == 0
    # a small world is a rewired ring lattice: its degrees stay near k, the random graph's spread out
    spread = torch.stack([deg[i][g.mask[i]].std() for i in range(60)])
    assert float(spread[g.y == 0].mean()) < float(spread[g.y == 1].mean())
    with pytest.raises(GraphInputError, match="lattice_k"):
        smallworld_graphs(4, torch.Generator().manual_seed(0), nodes=(6, 10))


def test_smallworld_split_by_density_is_deterministic_and_balanced() -> None:
    split = make_domains("smallworld", seed=3, per_domain=60, target_size=40)
    sizes = [len(split.a_train), len(split.a_test), len(split.b_train), len(split.b_test), len(split.target)]
    assert sum(sizes) == 160 and split.num_classes == 2 and split.num_features == 20
    assert float(split.a_train.density.max()) <= float(split.b_train.density.min())
    assert float(split.a_train.density.mean()) < 2.0 < float(split.b_train.density.mean())
    assert set(split.target.domain.tolist()) == {0, 1}
    for part in (split.a_train, split.b_train, split.target):
        assert set(part.y.tolist()) == {0, 1}
    again = make_domains("smallworld", seed=3, per_domain=60, target_size=40)
    assert torch.equal(again.a_train.adj, split.a_train.adj) and torch.equal(again.target.y, split.target.y)
    other = make_domains("smallworld", seed=4, per_domain=60, target_size=40)
    assert not torch.equal(other.a_train.adj, split.a_train.adj)
    infos = available_datasets("graph-domains")
    assert infos["graphs/smallworld"].offline
    assert len(load_dataset("graphs/smallworld", seed=0, per_domain=20, target_size=10).target) == 10


def test_smallworld_density_shift_hurts_an_expert() -> None:
    """The property ``smallworld`` exists for: an expert trained on one density half loses a large part of its
    accuracy on the other (on ``molecules`` the loss is about 3 points)."""
    split = make_domains("smallworld", seed=0, per_domain=160, target_size=20)
    cfg = dataclasses.replace(PRESETS["smoke"], expert_epochs=20, dataset="smallworld")
    gaps = []
    for dom, train, own, other in (
        ("A", split.a_train, split.a_test, split.b_test),
        ("B", split.b_train, split.b_test, split.a_test),
    ):
        expert = ogmm_train.train_expert("gcn", train, 2, cfg, 0, 0)
        own_acc = ogmm_train.accuracy(ogmm_train.predict(expert, own), own.y)
        other_acc = ogmm_train.accuracy(ogmm_train.predict(expert, other), other.y)
        assert own_acc >= 0.8, (dom, own_acc)
        gaps.append(own_acc - other_acc)
    assert sum(gaps) / 2 >= 0.2, gaps


def test_smallworld_config_checks() -> None:
    assert max(SMALLWORLD_K) == SMALLWORLD_MAX_K
    with pytest.raises(ConfigError, match="min_nodes"):
        OGMMConfig(dataset="smallworld", min_nodes=8)
    assert OGMMConfig(dataset="motifs", min_nodes=8).min_nodes == 8


# ---- opt-in TU sets: the standard TU format from $ICLR26_DATA --------------------------------------------

#: Three MUTAG-format graphs: a triangle (label 1), a path of 4 nodes (label −1), a star of 4 nodes (label 1).
_GRAPHS = [
    (3, [(0, 1), (1, 2), (0, 2)], 1, [0, 1, 2]),
    (4, [(0, 1), (1, 2), (2, 3)], -1, [0, 0, 1, 2]),
    (4, [(0, 1), (0, 2), (0, 3)], 1, [2, 0, 0, 1]),
]


def _write_tu(root: Path, name: str, graphs: list, *, labels: bool = True) -> Path:
    """TU files as in the TU collection's archives: 1-based node ids, each undirected edge in both directions."""
    raw = root / "pyg" / "tu" / name / "raw"
    raw.mkdir(parents=True)
    a, indicator, graph_labels, node_labels = [], [], [], []
    offset = 0
    for gid, (n, edges, label, nl) in enumerate(graphs, start=1):
        for u, v in edges:
            a += [f"{u + offset + 1}, {v + offset + 1}", f"{v + offset + 1}, {u + offset + 1}"]
        indicator += [str(gid)] * n
        graph_labels.append(str(label))
        node_labels += [str(c) for c in nl]
        offset += n
    (raw / f"{name}_A.txt").write_text("\n".join(a) + "\n")
    (raw / f"{name}_graph_indicator.txt").write_text("\n".join(indicator) + "\n")
    if labels:
        (raw / f"{name}_graph_labels.txt").write_text("\n".join(graph_labels) + "\n")
    (raw / f"{name}_node_labels.txt").write_text("\n".join(node_labels) + "\n")
    return raw


@pytest.fixture
def no_download(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyG's TU download raises (as offline): a test that reaches it without local files fails loudly."""
    from torch_geometric.datasets import TUDataset

    def offline(self) -> None:
        raise OSError("network is unreachable")

    monkeypatch.setattr(TUDataset, "download", offline)


def test_tu_reader_reads_local_tu_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_download: None) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    raw = _write_tu(tmp_path, "MUTAG", _GRAPHS)
    assert tu_raw_dir("MUTAG") == raw
    g = read_tu("MUTAG")
    assert len(g) == 3 and g.mask.sum(1).tolist() == [3, 4, 4]
    assert g.y.tolist() == [1, 0, 1]  # TU labels −1 / 1 become 0 / 1
    assert (g.adj.sum((1, 2)) / 2).tolist() == [3, 3, 3]
    assert g.adj[1, 0, 1] == 1 and g.adj[1, 0, 2] == 0 and g.adj[2, 0].sum() == 3  # path vs star
    assert torch.equal(g.adj, g.adj.transpose(1, 2))
    assert g.x.shape == (3, 4, 3)  # node labels 0..2 as one-hot features, zero rows at padding
    assert g.x[2, :4].argmax(-1).tolist() == [2, 0, 0, 1] and float(g.x[0, 3].sum()) == 0
    with pytest.raises(DataError, match="MUTAG under .*3 graphs, expected at least 10"):
        make_domains("MUTAG", seed=0)


def test_tu_set_splits_by_density_from_local_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_download: None
) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    _write_tu(tmp_path, "PTC_MR", _GRAPHS * 6)
    split = make_domains("PTC_MR", seed=0)
    sizes = [len(split.a_train), len(split.a_test), len(split.b_train), len(split.b_test), len(split.target)]
    assert sum(sizes) == 18 and min(sizes) > 0
    assert split.num_classes == 2 and split.num_features == 3
    assert float(split.a_train.density.max()) <= float(split.b_train.density.min())


def test_tu_set_absent_or_incomplete_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_download: None
) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    with pytest.raises(DataError) as err:
        read_tu("NCI1")
    msg = str(err.value)
    assert "\n" not in msg
    assert "NCI1_A.txt" in msg and str(tmp_path / "pyg" / "tu" / "NCI1" / "raw") in msg and "ICLR26_DATA" in msg
    _write_tu(tmp_path, "MUTAG", _GRAPHS, labels=False)
    with pytest.raises(DataError, match="MUTAG_graph_labels.txt"):
        read_tu("MUTAG")
