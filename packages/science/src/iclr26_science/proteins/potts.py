"""Potts models with known couplings: protein-like families whose mutant fitness is exact.

A Potts model over sequences ``x ∈ {0..q−1}^L`` (``q = 20`` amino acids, :data:`AMINO_ACIDS` order) is

    E(x) = Σ_i h_i(x_i) + Σ_{i<j} J_ij(x_i, x_j),        p(x) ∝ exp(E(x))

with fields ``h [L, q]`` and symmetric couplings ``J [L, L, q, q]`` (``J_ij(a, b) = J_ji(b, a)``, ``J_ii = 0``).
``E`` plays the role of fitness (the log-probability of the family up to ``log Z``), so the effect of a
mutant of a wild type is exactly ``ΔE = E(mutant) − E(wild type)``. :func:`random_potts` draws fields and
sparse couplings on a contact-like graph (every residue coupled to its chain neighbours within
``local_range`` plus ``long_range`` random pairs); :meth:`PottsModel.sample` draws a family by Gibbs sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iclr26_science.proteins.tokens import AMINO_ACIDS, Mutation, check_sequence, parse_mutations
from iclr26_shared.errors import DataError

__all__ = ["PottsModel", "decode", "encode", "random_potts", "single_mutants"]

Q = len(AMINO_ACIDS)
_INDEX = {a: i for i, a in enumerate(AMINO_ACIDS)}


def encode(seqs: Sequence[str]) -> np.ndarray:
    """``[N, L]`` int states of equally long sequences."""
    rows = [[_INDEX[a] for a in check_sequence(s, standard_only=True)] for s in seqs]
    if len({len(r) for r in rows}) > 1:
        raise DataError("sequences of a Potts model must all have the same length")
    return np.array(rows, dtype=np.int64)


def decode(states: np.ndarray) -> list[str]:
    """Sequences of ``[N, L]`` int states."""
    return ["".join(AMINO_ACIDS[int(k)] for k in row) for row in np.atleast_2d(states)]


@dataclass(frozen=True)
class PottsModel:
    """Fields ``h [L, q]`` and couplings ``J [L, L, q, q]`` (float64)."""

    h: np.ndarray
    J: np.ndarray

    def __post_init__(self) -> None:
        L, q = self.h.shape
        if self.J.shape != (L, L, q, q):
            raise DataError(f"couplings have shape {self.J.shape}, expected {(L, L, q, q)}")
        if not np.allclose(self.J, self.J.transpose(1, 0, 3, 2)):
            raise DataError("couplings must satisfy J_ij(a, b) = J_ji(b, a)")
        if np.abs(self.J[np.arange(L), np.arange(L)]).max() > 0:
            raise DataError("self-couplings J_ii must be zero")

    @property
    def length(self) -> int:
        """L."""
        return int(self.h.shape[0])

    def energy(self, x: np.ndarray | Sequence[str]) -> np.ndarray:
        """``E`` of ``[N, L]`` states (or sequences): ``[N]``."""
        s = encode(list(x)) if not isinstance(x, np.ndarray) else np.atleast_2d(x)
        L = self.length
        if s.shape[1] != L:
            raise DataError(f"sequence length {s.shape[1]} does not match the Potts model's {L}")
        i = np.arange(L)
        e = self.h[i, s].sum(1)
        pair = self.J[i[:, None], i[None, :], s[:, :, None], s[:, None, :]]  # [N, L, L]
        return e + 0.5 * pair.sum((1, 2))

    def mutant_effects(self, wild_type: str, mutants: Sequence[str | Sequence[Mutation]]) -> np.ndarray:
        """Exact ``ΔE = E(mutant) − E(wild type)`` (``[M]``) of ``"A12G"``-style mutants."""
        wt = check_sequence(wild_type, "wild-type sequence", standard_only=True)
        base = encode([wt])[0]
        rows = []
        for m in mutants:
            muts = parse_mutations(m, wt) if isinstance(m, str) else m
            s = base.copy()
            for mu in muts:
                s[mu.pos] = _INDEX[mu.mt]
            rows.append(s)
        e = self.energy(np.array(rows))
        return e - self.energy(base[None])[0]

    def conditional_logits(self, s: np.ndarray, i: int) -> np.ndarray:
        """``h_i(a) + Σ_j J_ij(a, s_j)`` for every state ``a`` (``[N, q]``): ``p(x_i | x_\\i)`` up to softmax."""
        L = self.length
        j = np.arange(L)
        return self.h[i][None] + self.J[i, j[None, :], :, s].sum(1)

    def sample(
        self, n: int, *, sweeps: int = 200, seed: int = 0, beta: float = 1.0, init: str | None = None
    ) -> np.ndarray:
        """``[n, L]`` states from ``n`` independent Gibbs chains after ``sweeps`` full sweeps (at inverse
        temperature ``beta``); ``init`` starts every chain from that sequence instead of at random."""
        rng = np.random.default_rng(seed)
        L = self.length
        s = np.tile(encode([init])[0], (n, 1)) if init else rng.integers(0, Q, size=(n, L))
        for _ in range(sweeps):
            for i in rng.permutation(L):
                logits = beta * self.conditional_logits(s, i)
                p = np.exp(logits - logits.max(1, keepdims=True))
                p /= p.sum(1, keepdims=True)
                u = rng.random((n, 1))
                s[:, i] = np.minimum((p.cumsum(1) < u).sum(1), Q - 1)
        return s


def random_potts(
    length: int,
    *,
    seed: int = 0,
    field_scale: float = 1.0,
    coupling_scale: float = 0.5,
    local_range: int = 2,
    long_range: int = 0,
) -> PottsModel:
    """A random Potts model: ``h ~ N(0, field_scale²)``; ``J_ij ~ N(0, coupling_scale²)`` on the pairs
    ``0 < |i − j| <= local_range`` and ``long_range`` (default ``length``) random distant pairs; zero elsewhere."""
    if length < 2:
        raise DataError(f"a Potts family needs length >= 2, got {length}")
    rng = np.random.default_rng(seed)
    h = rng.normal(0.0, field_scale, size=(length, Q))
    J = np.zeros((length, length, Q, Q))
    pairs = {(i, j) for i in range(length) for j in range(i + 1, min(length, i + local_range + 1))}
    n_long = length if long_range == 0 else long_range
    far = [(i, j) for i in range(length) for j in range(i + local_range + 1, length)]
    if far:
        pick = rng.choice(len(far), size=min(n_long, len(far)), replace=False)
        pairs |= {far[k] for k in pick}
    for i, j in sorted(pairs):
        c = rng.normal(0.0, coupling_scale, size=(Q, Q))
        J[i, j] = c
        J[j, i] = c.T
    return PottsModel(h, J)


def single_mutants(wild_type: str) -> list[str]:
    """All ``19 L`` single substitutions of ``wild_type`` as ``"A12G"`` strings (1-based)."""
    wt = check_sequence(wild_type, "wild-type sequence", standard_only=True)
    return [f"{a}{i + 1}{b}" for i, a in enumerate(wt) for b in AMINO_ACIDS if b != a]
