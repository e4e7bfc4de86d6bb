"""Potts energies of mutants against a brute-force double loop; validation; Gibbs sampling."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from iclr26_science.proteins import AMINO_ACIDS, PottsModel, random_potts, single_mutants
from iclr26_science.proteins.potts import decode, encode
from iclr26_shared.errors import DataError


def _brute_energy(p: PottsModel, seq: str) -> float:
    s = [AMINO_ACIDS.index(a) for a in seq]
    e = sum(p.h[i, s[i]] for i in range(len(s)))
    e += sum(p.J[i, j, s[i], s[j]] for i in range(len(s)) for j in range(i + 1, len(s)))
    return float(e)


def test_energy_and_mutant_effects_match_brute_force() -> None:
    p = random_potts(7, seed=3, local_range=2, long_range=3)
    wt = decode(p.sample(1, sweeps=3, seed=1))[0]
    assert p.energy([wt])[0] == pytest.approx(_brute_energy(p, wt), abs=1e-10)
    muts = single_mutants(wt)
    assert len(muts) == 19 * 7
    doubles = [f"{muts[0]}:{muts[-1]}"]
    got = p.mutant_effects(wt, muts[:25] + doubles)
    from iclr26_science.proteins import apply_mutations, parse_mutations

    want = [
        _brute_energy(p, apply_mutations(wt, parse_mutations(m, wt))) - _brute_energy(p, wt)
        for m in muts[:25] + doubles
    ]
    np.testing.assert_allclose(got, want, atol=1e-10)
    # a double mutant = its two singles + the epistasis term of the coupling between the two sites
    (m1,), (m2,) = parse_mutations(muts[0], wt), parse_mutations(muts[-1], wt)
    a1, w1, a2, w2 = (AMINO_ACIDS.index(x) for x in (m1.mt, m1.wt, m2.mt, m2.wt))
    Jij = p.J[m1.pos, m2.pos]
    epistasis = Jij[a1, a2] - Jij[a1, w2] - Jij[w1, a2] + Jij[w1, w2]
    singles = p.mutant_effects(wt, [muts[0], muts[-1]])
    assert got[-1] == pytest.approx(singles.sum() + epistasis, abs=1e-10)


def test_couplings_are_sparse_and_symmetric() -> None:
    p = random_potts(12, seed=0, local_range=1, long_range=2)
    nz = {(i, j) for i in range(12) for j in range(12) if p.J[i, j].any()}
    assert all((j, i) in nz for i, j in nz)
    assert len(nz) == 2 * (11 + 2)
    np.testing.assert_array_equal(p.J, p.J.transpose(1, 0, 3, 2))


def test_bad_models_and_inputs() -> None:
    h, J = np.zeros((3, 20)), np.zeros((3, 3, 20, 20))
    J[0, 1, 0, 1] = 1.0  # J_10 missing
    with pytest.raises(DataError, match="J_ij"):
        PottsModel(h, J)
    with pytest.raises(DataError, match="shape"):
        PottsModel(h, np.zeros((3, 3, 20, 19)))
    p = random_potts(5, seed=0)
    with pytest.raises(DataError, match="does not match"):
        p.mutant_effects("MKVLA", ["A1G"])
    with pytest.raises(DataError, match="length"):
        p.energy(["MKV"])
    with pytest.raises(DataError, match="same length"):
        encode(["MKV", "MK"])


def test_gibbs_sampler_matches_the_exact_two_site_distribution() -> None:
    rng = np.random.default_rng(0)
    h = rng.normal(0, 1.5, (2, 20))
    J = np.zeros((2, 2, 20, 20))
    c = rng.normal(0, 1.0, (20, 20))
    J[0, 1], J[1, 0] = c, c.T
    p = PottsModel(h, J)
    states = np.array(list(itertools.product(range(20), repeat=2)))
    e = p.energy(states)
    exact = np.exp(e - e.max())
    exact /= exact.sum()
    s = p.sample(4000, sweeps=4, seed=1)
    marg = np.bincount(s[:, 0], minlength=20) / len(s)
    want = exact.reshape(20, 20).sum(1)
    assert np.abs(marg - want).max() < 0.03
