"""Library loaders refuse a bad file with the package's one-line DataError naming it (issue 52; a DataError that
reaches a method's CLI is exit 2, tested in iclr26_shared)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iclr26_shared.errors import DataError


def _one_line(err: pytest.ExceptionInfo[DataError], path: Path) -> None:
    msg = str(err.value)
    assert str(path) in msg and "\n" not in msg, msg


@pytest.mark.parametrize("kind", ["junk.npz", "array.npy", "empty.npz", "pickle.npz"])
def test_read_network_map_rejects_a_file_that_is_not_an_npz_archive(tmp_path: Path, kind: str) -> None:
    from iclr26_science.fmri import read_network_map

    path = tmp_path / kind
    if kind == "junk.npz":
        path.write_bytes(b"this is not a zip archive\x00\x01")
    elif kind == "array.npy":
        np.save(path, np.arange(457))
        path = tmp_path / "array.npy"
    elif kind == "empty.npz":
        path.write_bytes(b"")
    else:
        np.save(tmp_path / "p.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
        (tmp_path / "p.npy").rename(path)
    with pytest.raises(DataError) as err:
        read_network_map(path)
    _one_line(err, path)


@pytest.mark.parametrize("content", ["", "REMARK nothing here\nEND\n", "\x00\x01garbage\n"])
def test_load_structure_rejects_an_empty_or_atomless_pdb(tmp_path: Path, content: str) -> None:
    from iclr26_science.cryoem import load_structure

    path = tmp_path / "model.pdb"
    path.write_text(content)
    with pytest.raises(DataError) as err:
        load_structure(path)
    _one_line(err, path)


def _cif(tmp_path: Path, name: str, old: str, new: str) -> Path:
    from pymatgen.core import Lattice, Structure

    text = Structure(Lattice.cubic(3.6), ["Cu"], [[0, 0, 0]]).to(fmt="cif")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("_cell_length_a   3.60000000", "_cell_length_a   -3.60000000", "_cell_length_a"),
        ("_cell_length_c   3.60000000", "_cell_length_c   0.0", "could not be parsed"),  # pymatgen refuses it
        ("_cell_angle_beta   90.00000000", "_cell_angle_beta   190.0", "_cell_angle_beta"),
    ],
)
def test_cif_to_input_rejects_a_negative_or_zero_cell_length_and_a_bad_angle(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    from iclr26_science.crystals import cif_to_input

    ok = _cif(tmp_path, "ok.cif", old, old)
    assert cif_to_input(ok).space_group == 221  # the unmodified file reads (Pm-3m)
    path = _cif(tmp_path, "bad.cif", old, new)
    with pytest.raises(DataError, match=field) as err:
        cif_to_input(path)
    _one_line(err, path)
