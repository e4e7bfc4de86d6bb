"""Molecule graphs from ase's G2 collection: bond rule, label, derivatives, determinism, density split."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from iclr26_graphs.data.graph_domains import make_domains, molecule_graphs
from iclr26_graphs.data.molecules import (
    ELEMENTS,
    MAX_DEGREE,
    Molecule,
    g2_molecules,
    hbd_label,
    molecule_features,
    molecule_set,
    substitute,
)
from iclr26_shared.data import available_datasets, load_dataset
from iclr26_shared.errors import DataError


def _g2(name: str) -> Molecule:
    return next(m for m in g2_molecules() if m.name == name)


def _bond_types(mol: Molecule) -> Counter[str]:
    return Counter("-".join(sorted((mol.symbols[i], mol.symbols[j]))) for i, j in mol.bonds)


def test_bond_rule_on_known_molecules() -> None:
    assert _bond_types(_g2("C6H6")) == Counter({"C-C": 6, "C-H": 6})  # 12 bonds (bond orders not kept)
    assert _bond_types(_g2("CH4")) == Counter({"C-H": 4})
    assert _bond_types(_g2("H2O")) == Counter({"H-O": 2})
    assert _bond_types(_g2("CH3CH2OH")) == Counter({"C-H": 5, "C-C": 1, "C-O": 1, "H-O": 1})
    assert _bond_types(_g2("F2")) == Counter({"F-F": 1})  # 1.41 Å: missed by a 1.2x radius rule
    assert _bond_types(_g2("ClNO")) == Counter({"Cl-N": 1, "N-O": 1})  # the long 2.03 Å N-Cl bond


def test_every_g2_atom_is_bonded_and_hydrogens_have_one_bond() -> None:
    mols = g2_molecules()
    assert len(mols) == 146  # the 162 G2 entries, minus single atoms and repeated graphs (electronic states)
    assert len({m.wl_hash() for m in mols}) == len(mols)
    for m in mols:
        deg = Counter(i for b in m.bonds for i in b)
        assert all(deg[i] >= 1 for i in range(len(m.symbols))), m.name
        assert all(deg[i] == 1 for i, s in enumerate(m.symbols) if s == "H" and m.name != "H2"), m.name


def test_donor_label_needs_the_bonds() -> None:
    # same atoms C2H6O: ethanol has an O-H bond, dimethyl ether has none
    assert sorted(_g2("CH3CH2OH").symbols) == sorted(_g2("CH3OCH3").symbols)
    assert _g2("CH3CH2OH").label == 1 and _g2("CH3OCH3").label == 0
    assert _g2("NH3").label == 1 and _g2("H2O").label == 1 and _g2("HCN").label == 0 and _g2("CH3SH").label == 0
    assert sum(m.label for m in g2_molecules()) == 20
    assert hbd_label(Molecule("x", ("O", "H", "C"), ((0, 1), (0, 2)))) == 1


def test_substitution_keeps_valence_and_makes_real_molecules() -> None:
    methane = _g2("CH4")
    methanol = substitute(methane, [1], ["OH"])
    assert methanol.wl_hash() == _g2("CH3OH").wl_hash()
    assert substitute(methane, [2], ["CH3"]).wl_hash() == _g2("C2H6").wl_hash()
    with pytest.raises(DataError, match="not a hydrogen"):
        substitute(methane, [0], ["F"])
    for mol in molecule_set(120, seed=3):
        deg = Counter(i for b in mol.bonds for i in b)
        for i, s in enumerate(mol.symbols):
            if s == "H":
                assert deg[i] == 1, mol.name
            if s == "C":
                assert deg[i] <= 4, mol.name


def test_molecule_set_is_deterministic_balanced_and_distinct() -> None:
    a, b, c = molecule_set(200, seed=0), molecule_set(200, seed=0), molecule_set(200, seed=1)
    assert a == b and a != c
    assert sum(m.label for m in a) == 100
    assert len({m.wl_hash() for m in a}) == 200
    assert all(m.label == hbd_label(m) for m in a)
    real = {m.name for m in g2_molecules() if m.label == 1}
    assert real <= {m.name for m in a}  # every real G2 donor is used before derivatives
    with pytest.raises(DataError, match="num"):
        molecule_set(1, seed=0)


def test_molecule_features_and_dense_graphs() -> None:
    x = molecule_features(_g2("CH3OH"))
    assert x.shape == (6, len(ELEMENTS) + 1 + MAX_DEGREE + 1)
    assert torch.equal(x.sum(1), torch.full((6,), 2.0))
    g = molecule_graphs(40, seed=0)
    assert torch.equal(g.adj, g.adj.transpose(1, 2)) and float(g.adj.diagonal(dim1=1, dim2=2).abs().sum()) == 0
    assert torch.equal(g.x.sum(-1), 2 * g.mask.float())
    assert int(g.y.sum()) == 20


def test_molecule_domains_split_by_density() -> None:
    split = make_domains("molecules", seed=0, per_domain=60, target_size=40)
    sizes = [len(split.a_train), len(split.a_test), len(split.b_train), len(split.b_test), len(split.target)]
    assert sum(sizes) == 160
    assert split.num_classes == 2 and split.num_features == len(ELEMENTS) + 1 + MAX_DEGREE + 1
    assert float(split.a_train.density.max()) <= float(split.b_train.density.min())
    assert set(split.target.domain.tolist()) == {0, 1}
    for part in (split.a_train, split.b_train, split.target):
        assert set(part.y.tolist()) == {0, 1}
    again = make_domains("molecules", seed=0, per_domain=60, target_size=40)
    assert torch.equal(again.target.adj, split.target.adj) and torch.equal(again.a_train.x, split.a_train.x)
    between = make_domains("molecules", seed=0, per_domain=60, target_size=40, target="between")
    assert set(between.target.domain.tolist()) == {-1}
    assert float(between.a_train.density.max()) <= float(between.target.density.min())


def test_registry_entries() -> None:
    infos = available_datasets("graph-domains")
    assert {"graphs/molecules", "graphs/motifs"} <= set(infos) and infos["graphs/molecules"].offline
    split = load_dataset("graphs/molecules", seed=0, per_domain=20, target_size=10)
    assert len(split.target) == 10
