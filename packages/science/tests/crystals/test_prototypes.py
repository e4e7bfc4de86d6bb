"""Structure-family (prototype) data: symmetry, detected groups, relaxed EMT labels, cache, errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from iclr26_science.crystals.dataset import CrystalDataset, emt_energy_per_atom, family_crystals, label_diagnostics
from iclr26_science.crystals.prototypes import PROTOTYPES, build_prototype, relax_under_symmetry
from iclr26_science.crystals.structures import input_to_structure, symmetry_mismatch
from iclr26_science.methods.crystal_fourier_transformer.config import FAMILY_GROUPS, PRESETS, PROTOTYPE_HOLDOUT
from iclr26_shared.errors import ConfigError, DataError

#: Small cells (1-8 atoms) from four crystal systems, so the test stays fast.
FAMILIES = ("B2-CsCl", "L12-Cu3Au", "C32-AlB2", "L10-CuAu", "A15-Cr3Si")


def _data() -> CrystalDataset:
    return family_crystals(FAMILIES, 2, seed=0, elements=("Cu", "Au", "Ni"), cache=False)


@pytest.fixture(scope="module")
def data() -> CrystalDataset:
    return _data()


def test_families_are_deterministic_symmetric_and_labelled_with_spglibs_group(data: CrystalDataset) -> None:
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    again = _data()
    np.testing.assert_array_equal(data.targets, again.targets)
    np.testing.assert_array_equal(data.groups, again.groups)
    assert data.families is not None and set(data.families) == set(FAMILIES)
    assert np.isfinite(data.targets).all()
    for crystal, target, family in zip(data.crystals, data.targets, data.families, strict=True):
        assert symmetry_mismatch(crystal) < 1e-6
        detected = SpacegroupAnalyzer(input_to_structure(crystal), symprec=0.01).get_space_group_number()
        assert detected == crystal.space_group == PROTOTYPES[str(family)].group
        assert abs(emt_energy_per_atom(crystal) - target) < 1e-9  # the label is the cell the models see
        assert len(set(crystal.species.tolist())) == PROTOTYPES[str(family)].slots  # distinct species per slot


def test_relaxation_under_symmetry_lowers_the_energy_and_forgets_the_start() -> None:
    """The relaxed label is a minimum over the symmetric degrees of freedom: below the strained start,
    the same from a 15% smaller or larger start (so it does not encode the starting distances), and the
    relaxed cell keeps its group."""
    import spglib
    from ase.calculators.emt import EMT

    proto = PROTOTYPES["B1-NaCl"]
    energies = []
    for volume in (11.0, 13.0, 15.0):
        atoms = build_prototype(proto, ("Cu", "Au"), volume)
        atoms.calc = EMT()
        start = float(atoms.get_potential_energy()) / len(atoms)
        relaxed, energy, converged = relax_under_symmetry(atoms)
        assert converged and energy < start
        cell = (np.asarray(relaxed.cell).tolist(), relaxed.get_scaled_positions().tolist(), relaxed.numbers.tolist())
        dataset = spglib.get_symmetry_dataset(cell, symprec=1e-3)
        assert dataset is not None and dataset.number == 225
        energies.append(energy)
    assert max(energies) - min(energies) < 1e-4


@pytest.mark.parametrize("volume", [11.0, 15.0])
def test_unit_and_frechet_cell_filters_reach_the_same_minimum(volume: float) -> None:
    """Both filters stop at the stationary point of the symmetry-constrained EMT energy: the Cu3Au (L1_2,
    cell-only DOF) energy agrees to well below the fmax scale, and with the 1-D volume minimum of
    :func:`relax_volume` (an independent optimiser: bounded Brent on the isotropic scale)."""
    from pymatgen.io.ase import AseAtomsAdaptor

    from iclr26_science.crystals.dataset import relax_volume
    from iclr26_science.crystals.structures import structure_to_input

    atoms = build_prototype(PROTOTYPES["L12-Cu3Au"], ("Cu", "Au"), volume)
    _, e_unit, ok_unit = relax_under_symmetry(atoms, cell_filter="unit")
    _, e_frechet, ok_frechet = relax_under_symmetry(atoms, cell_filter="frechet")
    assert ok_unit and ok_frechet
    assert abs(e_unit - e_frechet) < 1e-5
    _, e_scan = relax_volume(structure_to_input(AseAtomsAdaptor.get_structure(atoms)), xatol=1e-5)
    assert abs(e_unit - e_scan) < 1e-5
    with pytest.raises(ValueError, match="cell_filter"):
        relax_under_symmetry(atoms, cell_filter="exp")  # pyright: ignore[reportArgumentType]


def test_cell_filter_is_in_the_cache_key_and_frechet_keeps_the_old_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    from iclr26_shared.config import stable_hash

    args = (("B2-CsCl",), 1)
    family_crystals(*args, elements=("Cu", "Au"), cell_filter="frechet")
    family_crystals(*args, elements=("Cu", "Au"), cell_filter="unit")
    names = sorted(p.name for p in tmp_path.rglob("prototypes-*.npz"))
    from iclr26_science.crystals.dataset import DATA_VERSION

    old = dict(families=["B2-CsCl"], per_family=1, seed=0, elements=["Cu", "Au"], relax=True, fmax=0.01,
               max_atoms=48, max_energy=3.0, version=DATA_VERSION, generator="prototypes-v1")  # fmt: skip
    assert len(names) == 2 and f"prototypes-{stable_hash(old)}.npz" in names


def test_family_data_are_cached_on_disk_with_their_families(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    first = family_crystals(("B2-CsCl", "L10-CuAu"), 2, elements=("Cu", "Au"))
    assert len(list(tmp_path.rglob("prototypes-*.npz"))) == 1
    again = family_crystals(("B2-CsCl", "L10-CuAu"), 2, elements=("Cu", "Au"))
    np.testing.assert_array_equal(again.targets, first.targets)
    assert first.families is not None and again.families is not None
    assert list(again.families) == list(first.families)
    sub = again.subset([1])
    assert sub.families is not None and list(sub.families) == [first.families[1]]


def test_bad_family_inputs_give_clear_errors() -> None:
    with pytest.raises(DataError, match="unknown prototype families"):
        family_crystals(("B2-CsCl", "Nope"), 1, cache=False)
    with pytest.raises(DataError, match="EMT"):
        family_crystals(("B2-CsCl",), 1, elements=("Cu", "Fe"), cache=False)
    with pytest.raises(DataError, match="needs 2 species"):
        build_prototype(PROTOTYPES["B2-CsCl"], ("Cu",), 12.0)


def test_config_table_matches_the_prototypes() -> None:
    assert FAMILY_GROUPS == {name: p.group for name, p in PROTOTYPES.items()}
    quick = PRESETS["quick"]
    assert quick.generator == "prototypes" and quick.holdout == PROTOTYPE_HOLDOUT
    train = {g for f, g in FAMILY_GROUPS.items() if g not in PROTOTYPE_HOLDOUT}
    held = {f for f, g in FAMILY_GROUPS.items() if g in PROTOTYPE_HOLDOUT}
    assert train and len(held) >= 6  # the held-out groups hold families no training group has


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"families": ("B2-CsCl", "Nope")}, "'families"),
        ({"families": ("B2-CsCl",)}, "'families"),
        ({"holdout_groups": (221, 223)}, "'holdout_groups.*leave at least one"),
        ({"holdout_groups": (15,)}, "'holdout_groups.*at least one group of the chosen families"),
        ({"per_family": 0}, "'per_family.*> 0"),
        ({"relax_fmax": 0.0}, "'relax_fmax.*> 0"),
    ],
)
def test_bad_prototype_config_names_the_field(change: dict[str, object], match: str) -> None:
    base = dataclasses.replace(PRESETS["quick"], families=("B2-CsCl", "A15-Cr3Si"))
    with pytest.raises(ConfigError, match=match):
        dataclasses.replace(base, **change)


def test_label_diagnostics_see_a_composition_only_target(data: CrystalDataset) -> None:
    fractions = np.array([np.mean(c.species == 79) for c in data.crystals])  # Au share
    fake = CrystalDataset(data.crystals, 0.3 * fractions - 0.1, data.intended)
    diag = label_diagnostics(fake)
    assert diag["composition_fit_mae"] < 1e-9 < diag["mean_predictor_mae"]
    assert diag["composition_min_distance_fit_mae"] < 1e-9
