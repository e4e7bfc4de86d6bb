r"""Molecule graphs offline: ase's G2 collection plus seeded substituted derivatives (for OGMM).

**Source.** The ``ase`` wheel ships the G2 small-molecule collection (``ase.collections.g2``: 162
entries with element symbols and 3-D positions; Curtiss et al., J. Chem. Phys. 106, 1063, 1997). We
keep the entries with at least two atoms and drop duplicate graphs (electronic states of one molecule,
e.g. the singlet and triplet SiH₂, give the same graph): 146 molecules.

**Bonds (our rule, documented).** Atoms ``i, j`` are bonded when their distance is below the sum of
their covalent radii plus 0.4 Å, ``d_ij < r_i + r_j + 0.4`` (ase's ``natural_cutoffs`` radii in a
``NeighborList``), the usual covalent-radius connectivity rule (OpenBabel and Jmol add 0.4–0.45 Å).
Checked on all of G2: every atom is bonded, no H has two bonds, and the only atoms above their common
valence are the real hypervalent ones (Cl in ClF₃, S in DMSO). Hydrogens are
explicit nodes; bond orders are not kept (benzene: 6 C–C + 6 C–H = 12 edges; methane: 4).

**Label (a real chemical property).** ``y = 1`` when the molecule is a **hydrogen-bond donor**: it has at
least one hydrogen bonded to nitrogen or oxygen (an N–H or O–H bond; Lipinski's HBD count > 0; S–H is
not counted, as in Lipinski). The label needs the bonds, not only the composition: ethanol
(CH₃CH₂OH, donor) and dimethyl ether (CH₃OCH₃, not) have the same atoms. In G2 only 20 of the 146
molecules are donors.

**Size and the generator.** 146 molecules, 20 of them positive, is too few for the density split into
two trained source domains plus a target, so the data set ``molecules`` adds **substituted
derivatives** of the G2 molecules (our generator, seeded): a G2 parent has 1–3 of its hydrogens (those
bonded to a heavy atom) replaced by substituents from :data:`SUBSTITUENTS` (F, Cl, CH₃, C₂H₅, OCH₃,
SH, CN, CHO; donors OH, NH₂, COOH, NHCH₃), each attached by one single bond where the hydrogen was, so
every atom keeps its valence. Derivatives get the same label rule; duplicates (by Weisfeiler–Lehman
hash on element labels, :func:`networkx.weisfeiler_lehman_graph_hash`) are dropped. A draw of ``n``
molecules is class-balanced: every real G2 molecule of a class is used first (a random subset when a
class has more than ``n/2``), derivatives fill the rest.

**Node features.** ``[element one-hot over`` :data:`ELEMENTS` ``+ other | degree one-hot 0..4]``
(20 dimensions).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn.functional as F

from iclr26_shared.errors import DataError

__all__ = [
    "BOND_TOLERANCE",
    "DONOR_GROUPS",
    "ELEMENTS",
    "MAX_DEGREE",
    "SUBSTITUENTS",
    "Molecule",
    "bonds_from_positions",
    "g2_molecules",
    "hbd_label",
    "molecule_features",
    "molecule_set",
    "substitute",
]

#: Elements of the G2 collection (one-hot slots; anything else goes to one extra slot).
ELEMENTS: tuple[str, ...] = ("H", "Li", "Be", "B", "C", "N", "O", "F", "Na", "Al", "Si", "P", "S", "Cl")
#: Bond rule: ``d_ij < r_i + r_j + BOND_TOLERANCE`` (Å) with ase's covalent radii (no tolerance misses every
#: C–H bond of G2: 1.09 Å > 0.76 + 0.31 Å; a factor 1.2 misses F–F, 1.41 Å > 1.2 · 1.14 Å; 0.3 Å misses the
#: long N–Cl bond of ClNO, 2.031 Å > 1.73 + 0.3 Å).
BOND_TOLERANCE = 0.4
#: Degree one-hot size − 1 (larger degrees share the last slot).
MAX_DEGREE = 4
#: Substituents: (element symbols, bonds inside the group); atom 0 bonds to the parent's heavy atom.
SUBSTITUENTS: dict[str, tuple[tuple[str, ...], tuple[tuple[int, int], ...]]] = {
    "F": (("F",), ()),
    "Cl": (("Cl",), ()),
    "CH3": (("C", "H", "H", "H"), ((0, 1), (0, 2), (0, 3))),
    "C2H5": (("C", "H", "H", "C", "H", "H", "H"), ((0, 1), (0, 2), (0, 3), (3, 4), (3, 5), (3, 6))),
    "OCH3": (("O", "C", "H", "H", "H"), ((0, 1), (1, 2), (1, 3), (1, 4))),
    "SH": (("S", "H"), ((0, 1),)),
    "CN": (("C", "N"), ((0, 1),)),
    "CHO": (("C", "O", "H"), ((0, 1), (0, 2))),
    "OH": (("O", "H"), ((0, 1),)),
    "NH2": (("N", "H", "H"), ((0, 1), (0, 2))),
    "COOH": (("C", "O", "O", "H"), ((0, 1), (0, 2), (2, 3))),
    "NHCH3": (("N", "H", "C", "H", "H", "H"), ((0, 1), (0, 2), (2, 3), (2, 4), (2, 5))),
}
#: Substituents that carry an N–H or O–H bond.
DONOR_GROUPS: tuple[str, ...] = ("OH", "NH2", "COOH", "NHCH3")
_PLAIN_GROUPS: tuple[str, ...] = tuple(g for g in SUBSTITUENTS if g not in DONOR_GROUPS)


@dataclass(frozen=True)
class Molecule:
    """A molecule graph: element symbols per atom and undirected bonds ``(i, j)``, ``i < j``."""

    name: str
    symbols: tuple[str, ...]
    bonds: tuple[tuple[int, int], ...]

    def __post_init__(self) -> None:
        n = len(self.symbols)
        for i, j in self.bonds:
            if not (0 <= i < j < n):
                raise DataError(f"molecule {self.name!r}: bond ({i}, {j}) is not a pair i < j of atoms in [0, {n})")

    @property
    def label(self) -> int:
        """The hydrogen-bond-donor label (:func:`hbd_label`)."""
        return hbd_label(self)

    def wl_hash(self) -> str:
        """Weisfeiler–Lehman hash of the element-labelled graph (duplicate detection)."""
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from((i, {"el": s}) for i, s in enumerate(self.symbols))
        g.add_edges_from(self.bonds)
        return nx.weisfeiler_lehman_graph_hash(g, node_attr="el", iterations=4)


def hbd_label(mol: Molecule) -> int:
    """1 when some hydrogen is bonded to N or O (a hydrogen-bond donor, Lipinski HBD > 0), else 0."""
    s = mol.symbols
    return int(any({s[i], s[j]} in ({"H", "N"}, {"H", "O"}) for i, j in mol.bonds))


def bonds_from_positions(atoms: object) -> tuple[tuple[int, int], ...]:
    """Bonds of an ``ase.Atoms``: ``d_ij < r_cov(i) + r_cov(j) + BOND_TOLERANCE`` (ase's natural cutoffs,
    each widened by half the tolerance, no skin)."""
    from ase.neighborlist import NeighborList, natural_cutoffs

    cutoffs = [r + BOND_TOLERANCE / 2 for r in natural_cutoffs(atoms)]  # pyright: ignore[reportArgumentType]
    nl = NeighborList(cutoffs, self_interaction=False, bothways=False, skin=0.0)
    nl.update(atoms)  # pyright: ignore[reportArgumentType]
    out = set()
    for i in range(len(atoms)):  # pyright: ignore[reportArgumentType]
        for j in nl.get_neighbors(i)[0]:
            out.add((min(i, int(j)), max(i, int(j))))
    return tuple(sorted(out))


@lru_cache(maxsize=1)
def g2_molecules() -> tuple[Molecule, ...]:
    """The G2 molecules with at least two atoms, one per distinct graph, in ase's order."""
    from ase.collections import g2

    out: list[Molecule] = []
    seen: set[str] = set()
    for name in g2.names:
        atoms = g2[name]
        if len(atoms) < 2:
            continue
        mol = Molecule(name, tuple(atoms.get_chemical_symbols()), bonds_from_positions(atoms))
        h = mol.wl_hash()
        if h not in seen:
            seen.add(h)
            out.append(mol)
    if len(out) < 100:
        raise DataError(f"ase.collections.g2 gave {len(out)} molecules with >= 2 atoms, expected about 146")
    return tuple(out)


def _substitutable(mol: Molecule) -> list[int]:
    """Hydrogens with exactly one bond, to a heavy atom."""
    nbrs: dict[int, list[int]] = {i: [] for i in range(len(mol.symbols))}
    for i, j in mol.bonds:
        nbrs[i].append(j)
        nbrs[j].append(i)
    return [i for i, s in enumerate(mol.symbols) if s == "H" and len(nbrs[i]) == 1 and mol.symbols[nbrs[i][0]] != "H"]


def substitute(mol: Molecule, sites: list[int], groups: list[str]) -> Molecule:
    """Replace the hydrogens ``sites`` of ``mol`` by ``groups`` (names in :data:`SUBSTITUENTS`), each
    bonded where its hydrogen was."""
    if len(sites) != len(groups) or len(set(sites)) != len(sites):
        raise DataError(f"substitute: {len(sites)} distinct sites needed for {len(groups)} groups")
    allowed = set(_substitutable(mol))
    anchor: dict[int, int] = {}
    for i, j in mol.bonds:
        if i in sites:
            anchor[i] = j
        if j in sites:
            anchor[j] = i
    for s in sites:
        if s not in allowed:
            raise DataError(f"substitute: atom {s} of {mol.name!r} is not a hydrogen on a heavy atom")
    keep = [i for i in range(len(mol.symbols)) if i not in sites]
    new_id = {old: k for k, old in enumerate(keep)}
    symbols = [mol.symbols[i] for i in keep]
    bonds = [(new_id[i], new_id[j]) for i, j in mol.bonds if i in new_id and j in new_id]
    for s, g in zip(sites, groups, strict=True):
        g_symbols, g_bonds = SUBSTITUENTS[g]
        base = len(symbols)
        symbols.extend(g_symbols)
        bonds.extend((base + a, base + b) for a, b in g_bonds)
        bonds.append((new_id[anchor[s]], base))
    name = f"{mol.name}+{'+'.join(sorted(groups))}"
    return Molecule(name, tuple(symbols), tuple(sorted((min(i, j), max(i, j)) for i, j in bonds)))


def _derivative(parents: list[Molecule], label: int, rng: random.Random) -> Molecule | None:
    parent = rng.choice(parents)
    sites = _substitutable(parent)
    if not sites:
        return None
    k = rng.randint(1, min(3, len(sites)))
    if label == 1:
        groups = [rng.choice(DONOR_GROUPS), *(rng.choice(list(SUBSTITUENTS)) for _ in range(k - 1))]
    else:
        groups = [rng.choice(_PLAIN_GROUPS) for _ in range(k)]
    return substitute(parent, rng.sample(sites, k), groups)


def molecule_set(num: int, seed: int, *, max_attempts: int = 200_000) -> list[Molecule]:
    """``num`` distinct molecules, class-balanced (``num // 2`` donors), in a seeded random order: the real
    G2 molecules of each class first (a random subset when there are more), then substituted derivatives."""
    if num < 2:
        raise DataError(f"molecule_set: num = {num}, expected >= 2")
    rng = random.Random(seed)
    real = list(g2_molecules())
    want = {1: num // 2, 0: num - num // 2}
    chosen: list[Molecule] = []
    seen: set[str] = set()
    for c in (0, 1):
        pool = [m for m in real if m.label == c]
        rng.shuffle(pool)
        for m in pool[: want[c]]:
            chosen.append(m)
            seen.add(m.wl_hash())
    for m in real:
        seen.add(m.wl_hash())  # a derivative equal to an unused G2 molecule is not new either
    parents = {0: [m for m in real if m.label == 0], 1: real}
    counts = {c: sum(m.label == c for m in chosen) for c in (0, 1)}
    attempts = 0
    while counts[0] < want[0] or counts[1] < want[1]:
        attempts += 1
        if attempts > max_attempts:
            raise DataError(f"molecule_set: only {len(chosen)} distinct molecules after {max_attempts} draws")
        c = 0 if counts[0] < want[0] and (counts[1] >= want[1] or rng.random() < 0.5) else 1
        mol = _derivative(parents[c], c, rng)
        if mol is None or mol.label != c:
            continue
        h = mol.wl_hash()
        if h in seen:
            continue
        seen.add(h)
        chosen.append(mol)
        counts[c] += 1
    rng.shuffle(chosen)
    return chosen


def molecule_features(mol: Molecule) -> torch.Tensor:
    """``[n, len(ELEMENTS) + 1 + MAX_DEGREE + 1]``: element one-hot (last slot: other) and degree one-hot."""
    idx = torch.tensor([ELEMENTS.index(s) if s in ELEMENTS else len(ELEMENTS) for s in mol.symbols])
    deg = torch.zeros(len(mol.symbols), dtype=torch.long)
    for i, j in mol.bonds:
        deg[i] += 1
        deg[j] += 1
    return torch.cat(
        [F.one_hot(idx, len(ELEMENTS) + 1).float(), F.one_hot(deg.clamp(max=MAX_DEGREE), MAX_DEGREE + 1).float()], 1
    )
