"""The symmetry-adapted basis: invariance, frustrated frequencies, Reynolds twin, API and cache."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26_science.crystals import SymmetryAdaptedBasis, build_orbits, reynolds_basis, space_group_ops
from iclr26_science.crystals import basis as basis_mod
from iclr26_shared.errors import ConfigError

# one or more groups of every crystal system, centred and with glides/screws
SAMPLE = [1, 2, 5, 14, 15, 43, 62, 70, 88, 139, 141, 146, 161, 166, 176, 194, 198, 216, 225, 227, 230]


def _max_deviation(group: int, num_basis: int, rng: np.random.Generator) -> float:
    basis = SymmetryAdaptedBasis(group, num_basis)
    x = rng.random((6, 3))
    ref = basis(x)
    images = space_group_ops(group).apply(x)
    err = max(np.abs(basis(img) - ref).max() for img in images)
    shifted = x + rng.integers(-4, 5, size=x.shape)
    return max(err, float(np.abs(basis(shifted) - ref).max()))


@pytest.mark.parametrize("group", SAMPLE)
def test_invariant_under_every_operation_and_translation(group: int) -> None:
    assert _max_deviation(group, 16, np.random.default_rng(group)) < 1e-10


@pytest.mark.slow
def test_invariant_for_all_230_groups() -> None:
    rng = np.random.default_rng(0)
    assert max(_max_deviation(g, 32, rng) for g in range(1, 231)) < 1e-10


def test_not_invariant_without_symmetry_adaptation() -> None:
    """The check above can fail: a plain plane wave changes under the operations of Fm-3m."""
    x = np.random.default_rng(0).random((4, 3))
    images = space_group_ops(225).apply(x)
    wave = np.exp(2j * np.pi * (images @ np.array([1.0, 1.0, 1.0])))
    assert np.abs(wave - wave[0]).max() > 1e-2


@pytest.mark.parametrize("group", [14, 62, 139, 166, 194, 227])
def test_frustrated_frequencies_are_exactly_the_reynolds_zeros(group: int) -> None:
    table = build_orbits(group, 4.0)
    x = np.random.default_rng(1).random((12, 3))
    values = reynolds_basis(group, table.frequencies, x)
    zero = np.abs(values).max(axis=0) < 1e-12
    frustrated = table.frustrated[table.orbit]
    assert frustrated.any() and (~frustrated).any()
    np.testing.assert_array_equal(zero, frustrated)


def test_centring_absences() -> None:
    """F-centring keeps only h, k, l all even or all odd; I-centring keeps h + k + l even."""
    f = SymmetryAdaptedBasis(225, 40).frequencies
    parity = np.mod(f, 2)
    assert np.all((parity.sum(1) == 0) | (parity.sum(1) == 3))
    i = SymmetryAdaptedBasis(229, 40).frequencies
    assert np.all(np.mod(i.sum(1), 2) == 0)
    table = build_orbits(225, 2.0)
    assert (1, 0, 0) in {tuple(w) for w in table.frequencies[table.frustrated[table.orbit]]}


@pytest.mark.parametrize("group", [2, 14, 62, 146, 191, 221])
def test_spans_the_same_space_as_the_reynolds_twin(group: int) -> None:
    basis = SymmetryAdaptedBasis(group, max_frequency=3.0)
    x = np.random.default_rng(2).random((4 * basis.num_basis + 20, 3))
    ours = basis(x)  # [P, K]
    twin = reynolds_basis(group, build_orbits(group, 3.0).frequencies, x)  # [P, F]
    rank = np.linalg.matrix_rank
    assert rank(ours, tol=1e-8) == basis.num_basis == rank(twin, tol=1e-8)
    assert rank(np.concatenate([ours, twin], 1), tol=1e-8) == basis.num_basis
    # the representative's group average is e_O / |O| (unit normalisation, the default)
    rep = reynolds_basis(group, basis.representatives, x)
    np.testing.assert_allclose(rep, ours / basis.orbit_sizes, atol=1e-12)


def test_api_shapes_and_dtypes() -> None:
    basis = SymmetryAdaptedBasis(62, 20)
    x = np.random.default_rng(3).random((7, 3))
    out = basis(x)
    assert out.shape == (7, 20) and out.dtype == np.complex128
    t = basis(torch.from_numpy(x))
    assert t.shape == (7, 20) and t.dtype == torch.complex128
    np.testing.assert_allclose(t.numpy(), out, atol=1e-12)
    assert basis(torch.from_numpy(x).float()).dtype == torch.complex64
    feats = basis.real_features(x)
    assert feats.shape == (7, 40)
    np.testing.assert_allclose(feats[:, :20], np.real(out))
    # orthogonal on the torus, squared norm |O| (unit normalisation); the orthonormal switch: the identity
    g = (np.stack(np.meshgrid(*[np.arange(16) / 16] * 3, indexing="ij"), -1)).reshape(-1, 3)
    vals = basis(g)
    np.testing.assert_allclose(vals.conj().T @ vals / len(g), np.diag(basis.orbit_sizes), atol=1e-10)
    vals = SymmetryAdaptedBasis(62, 20, normalization="orthonormal")(g)
    np.testing.assert_allclose(vals.conj().T @ vals / len(g), np.eye(20), atol=1e-10)


@pytest.mark.parametrize("bad", [0, 231, -5, 3.0, "225", True])
def test_group_number_outside_1_230_is_a_clear_error(bad: object) -> None:
    with pytest.raises(ConfigError, match="space_group"):
        SymmetryAdaptedBasis(bad, 8)  # type: ignore[arg-type]


def test_cut_off_arguments_are_checked() -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        SymmetryAdaptedBasis(2)
    with pytest.raises(ConfigError, match="exactly one"):
        SymmetryAdaptedBasis(2, 8, max_frequency=2.0)
    with pytest.raises(ConfigError, match="num_basis"):
        SymmetryAdaptedBasis(2, 0)
    with pytest.raises(ValueError, match=r"\[\.\.\., 3\]"):
        SymmetryAdaptedBasis(2, 8)(np.zeros((4, 2)))


def test_disk_cache_round_trip(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    basis_mod._load_tables_cached.cache_clear()
    try:
        cold = SymmetryAdaptedBasis(141, 12)
        files = list((tmp_path / "crystals").rglob("sg141-K12.npz"))
        assert len(files) == 1
        basis_mod._load_tables_cached.cache_clear()
        warm = SymmetryAdaptedBasis(141, 12)
        np.testing.assert_array_equal(cold.frequencies, warm.frequencies)
        np.testing.assert_array_equal(cold.coefficients, warm.coefficients)
        files[0].write_bytes(b"corrupt")  # a corrupt entry is rebuilt, not trusted
        basis_mod._load_tables_cached.cache_clear()
        np.testing.assert_array_equal(SymmetryAdaptedBasis(141, 12).coefficients, cold.coefficients)
    finally:
        basis_mod._load_tables_cached.cache_clear()
