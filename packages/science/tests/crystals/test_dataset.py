"""Crystal data: detected-group labels, symmetry of the cells, EMT targets, save/load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iclr26_science.crystals import CrystalDataset, generate_crystals, orbit_crystals, real_crystals
from iclr26_science.crystals.dataset import emt_energy_per_atom, graph_batch, padded_batch
from iclr26_science.crystals.structures import input_to_structure, symmetry_mismatch
from iclr26_shared.errors import DataError


def _check(data: CrystalDataset) -> None:
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    assert len(data) > 0 and np.isfinite(data.targets).all()
    for crystal, target in zip(data.crystals, data.targets, strict=True):
        assert symmetry_mismatch(crystal) < 1e-6  # the cell is invariant under its group's operations
        detected = SpacegroupAnalyzer(input_to_structure(crystal), symprec=0.01).get_space_group_number()
        assert detected == crystal.space_group  # labelled with the group spglib detects
        assert abs(emt_energy_per_atom(crystal) - target) < 1e-9


def test_orbit_generator_labels_and_targets() -> None:
    data = orbit_crystals([2, 14, 62], 2, seed=3)
    _check(data)
    assert set(data.intended) <= {2, 14, 62}


@pytest.mark.slow
def test_pyxtal_generator_labels_and_targets() -> None:
    _check(generate_crystals([14, 139, 225], 3, seed=1, cache=False))


def test_real_crystals_are_fcc_metals() -> None:
    real = real_crystals(("Cu", "Al"))
    assert list(real.groups) == [225, 225]
    assert np.all(np.abs(real.targets) < 0.1)  # EMT is fitted to the fcc ground state (≈ 0 eV/atom)


def test_save_load_round_trip_and_corrupt_file(tmp_path: Path) -> None:
    data = orbit_crystals([2, 62], 2, seed=0)
    path = tmp_path / "set.npz"
    data.save(path)
    back = CrystalDataset.load(path)
    np.testing.assert_array_equal(back.targets, data.targets)
    np.testing.assert_array_equal(back.groups, data.groups)
    for a, b in zip(back.crystals, data.crystals, strict=True):
        np.testing.assert_array_equal(a.frac, b.frac)
    path.write_bytes(b"junk")
    with pytest.raises(DataError, match="set.npz"):
        CrystalDataset.load(path)


def test_batches() -> None:
    data = orbit_crystals([2, 62], 2, seed=0)
    b = padded_batch(data, [0, 1])
    n = max(data.crystals[0].num_atoms, data.crystals[1].num_atoms)
    assert b.species.shape == (2, n) and b.mask.sum().item() == data.crystals[0].num_atoms + data.crystals[1].num_atoms
    g = graph_batch(data, [0, 1], 3.5)
    assert g.edge_index.max().item() < len(g.species) and g.num_crystals == 2


def test_unknown_elements_are_rejected() -> None:
    with pytest.raises(DataError, match="EMT"):
        generate_crystals([2], 1, elements=("Cu", "Fe"), cache=False)


def test_volume_relaxation_lowers_the_energy_and_forgets_the_scale() -> None:
    """The relaxed label is a minimum over isotropic scale: below the generated energy, the same for any
    starting volume (so it no longer encodes the shortest distance), group and fractions unchanged."""
    from iclr26_science.crystals.dataset import relax_volume
    from iclr26_science.crystals.structures import CrystalInput

    data = orbit_crystals([62, 139], 1, seed=0, elements=("Cu", "Au"))
    for crystal, target in zip(data.crystals, data.targets, strict=True):
        relaxed, energy = relax_volume(crystal)
        assert energy <= target + 1e-12
        assert abs(emt_energy_per_atom(relaxed) - energy) < 1e-9
        assert relaxed.space_group == crystal.space_group and np.array_equal(relaxed.frac, crystal.frac)
        bigger = CrystalInput(crystal.species, crystal.frac, crystal.lattice * 1.15, crystal.space_group)
        relaxed2, energy2 = relax_volume(bigger)
        assert abs(energy2 - energy) < 1e-4
        np.testing.assert_allclose(relaxed2.lattice, relaxed.lattice, rtol=5e-3)


def test_relax_volumes_caches_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from iclr26_science.crystals.dataset import relax_volumes

    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    data = orbit_crystals([2], 2, seed=1, elements=("Cu", "Au"))
    first = relax_volumes(data)
    assert len(list(tmp_path.rglob("relaxed-*.npz"))) == 1
    again = relax_volumes(data)
    np.testing.assert_array_equal(again.targets, first.targets)
    assert not np.array_equal(first.targets, data.targets)


def test_label_diagnostics_see_a_target_that_is_only_the_shortest_distance() -> None:
    from iclr26_science.crystals.dataset import label_diagnostics, min_distances

    data = orbit_crystals([2, 14], 3, seed=2, elements=("Cu", "Au"))
    d = min_distances(data)
    assert (d >= 2.0 - 1e-9).all()  # the orbit generator rejects closer atoms
    fake = CrystalDataset(data.crystals, 3.0 - d, data.intended)
    diag = label_diagnostics(fake)
    assert diag["r_min_distance"] == pytest.approx(-1.0)
    assert diag["linear_fit_min_distance_mae"] < 1e-9 < diag["mean_predictor_mae"]
