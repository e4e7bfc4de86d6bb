"""Structure ↔ input conversion and clear errors on bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pymatgen.analysis.structure_matcher import StructureMatcher
from pymatgen.core import Lattice, Structure

from iclr26_science.crystals import (
    CrystalInput,
    cif_to_input,
    input_to_structure,
    load_materials_project,
    read_cif,
    structure_to_input,
)
from iclr26_science.crystals.structures import symmetry_mismatch
from iclr26_shared.data import package_dir
from iclr26_shared.errors import ConfigError, DataError

REAL = {"Li2O": 225, "SrTiO3": 221, "CsCl": 221, "Si": 227}
#: pymatgen's copies of these are slightly distorted, so only the round trip is checked
DISTORTED = ["LiFePO4", "TiO2", "VO2", "NaFePO4"]


@pytest.mark.parametrize("name", sorted(REAL) + DISTORTED)
def test_real_structure_round_trip(name: str) -> None:
    path = package_dir("pymatgen", "util", "structures", f"{name}.json")
    structure = Structure.from_file(path)
    inp = structure_to_input(structure)
    assert inp.space_group == REAL.get(name, inp.space_group)
    assert symmetry_mismatch(inp) < 1e-6
    back = input_to_structure(inp)
    assert StructureMatcher().fit(back, structure)
    again = structure_to_input(back)
    assert again.space_group == inp.space_group and again.num_atoms == inp.num_atoms
    np.testing.assert_allclose(again.lattice, inp.lattice, atol=1e-6)


def test_cif_round_trip(tmp_path: Path) -> None:
    structure = Structure.from_file(package_dir("pymatgen", "util", "structures", "Li2O.json"))
    cif = tmp_path / "li2o.cif"
    structure.to(filename=str(cif))
    inp = cif_to_input(cif)
    assert inp.space_group == 225 and inp.num_atoms == 12


def test_cif_that_does_not_parse(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cif"
    bad.write_text("this is not a CIF\n_cell_length_a oops\n")
    with pytest.raises(DataError, match="bad.cif"):
        read_cif(bad)
    with pytest.raises(DataError, match="does not exist"):
        read_cif(tmp_path / "missing.cif")


def test_partial_occupancy_is_rejected() -> None:
    s = Structure(Lattice.cubic(4.0), [{"Cu": 0.5, "Au": 0.5}], [[0, 0, 0]])
    with pytest.raises(DataError, match="partial occupancies"):
        structure_to_input(s)


def test_zero_volume_lattice_is_rejected() -> None:
    s = Structure(Lattice.cubic(4.0), ["Cu"], [[0, 0, 0]])
    s.lattice._matrix = np.array([[4.0, 0, 0], [0, 4.0, 0], [4.0, 4.0, 0]])  # degenerate on purpose
    with pytest.raises(DataError, match="zero volume"):
        structure_to_input(s)
    with pytest.raises(DataError, match="non-zero volume"):
        CrystalInput(np.array([29]), np.zeros((1, 3)), np.zeros((3, 3)), 1)


def test_unknown_element_is_rejected() -> None:
    s = Structure(Lattice.cubic(4.0), ["X"], [[0, 0, 0]])  # a dummy species
    with pytest.raises(DataError, match="unknown element"):
        structure_to_input(s)
    s = Structure(Lattice.cubic(4.0), ["Md"], [[0, 0, 0]])  # Z = 101
    with pytest.raises(DataError, match="unknown element"):
        structure_to_input(s)


def test_group_number_outside_1_230() -> None:
    with pytest.raises(ConfigError, match="space_group"):
        CrystalInput(np.array([29]), np.zeros((1, 3)), np.eye(3) * 4, 231)


def test_materials_project_is_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MP_API_KEY", raising=False)
    with pytest.raises(DataError, match="MP_API_KEY"):
        load_materials_project(["mp-149"])
