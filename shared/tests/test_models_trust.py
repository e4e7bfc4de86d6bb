"""Loading a saved model runs no foreign code (issue 52 §1): `iclr26_model.json` may only name a class of
an installed iclr26 package, iclr26_shared, transformers or diffusers (or one the caller vouches for with
`trust_class=`); the current directory and the run folder are never on the import path; a corrupted
folder is one `CheckpointError` line, not a traceback."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest
import torch

from iclr26_shared import models as models_mod
from iclr26_shared.errors import CheckpointError, Iclr26Error
from iclr26_shared.models import allowed_modules, load_model, save_model
from iclr26_shared.testing import ToyLinear

PAYLOAD = """
from pathlib import Path
Path({marker!r}).write_text("owned")

class Net:
    @classmethod
    def from_pretrained(cls, folder, **kwargs):
        return cls()
"""


def _saved(tmp_path: Path) -> Path:
    """A run folder holding one genuine model (iclr26_shared.testing.ToyLinear), returns the model folder."""
    torch.manual_seed(0)
    return save_model(tmp_path / "run", "net", ToyLinear(3, 2))


def _name_class(folder: Path, path: str) -> None:
    meta_file = folder / "iclr26_model.json"
    meta = json.loads(meta_file.read_text())
    meta["class"] = path
    meta_file.write_text(json.dumps(meta))


def _one_line(err: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(err.value)
    assert isinstance(err.value, Iclr26Error) and "\n" not in text, text
    return text


def test_the_allow_list_holds_the_installed_packages_and_the_ecosystems_not_arbitrary_modules() -> None:
    allowed = allowed_modules()
    assert {"iclr26_shared", "transformers", "diffusers", "iclr26_graphs"} <= allowed
    assert not {"os", "subprocess", "builtins", "evilmod", "torch"} & allowed


def test_a_genuine_model_of_an_allowed_package_loads(tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    loaded = load_model(folder.parent.parent)
    assert isinstance(loaded, ToyLinear) and loaded.weight.shape == (2, 3)


@pytest.mark.parametrize("how", ["plain", "trusted-string"])
def test_a_folder_shipping_its_own_module_is_refused_before_any_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The run folder ships evilmod.py (its import writes a file) and names "evilmod:Net"; loaded from
    inside that folder (cwd) and with the folder on sys.path, it is refused and the file never written.
    Even a caller who vouches for "evilmod:Net" by name gets no import from the cwd or the run folder."""
    folder = _saved(tmp_path)
    run = folder.parent.parent
    marker = tmp_path / "owned.txt"
    for where in (run, folder):
        (where / "evilmod.py").write_text(PAYLOAD.format(marker=str(marker)))
    _name_class(folder, "evilmod:Net")
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend(str(run))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "evilmod", raising=False)
    kwargs = {"trust_class": "evilmod:Net"} if how == "trusted-string" else {}
    with pytest.raises(CheckpointError) as err:
        load_model(".", **kwargs)
    text = _one_line(err)
    assert "evilmod" in text
    assert ("not from an installed iclr26 package" in text) == (how == "plain")
    assert not marker.exists() and "evilmod" not in sys.modules


def test_an_allowed_name_is_never_imported_from_the_cwd_or_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package shadowing an allowed name from the cwd/run folder is not found: the import runs with
    those folders off sys.path (here the allow-list is widened to a name only the folder has)."""
    folder = _saved(tmp_path)
    run = folder.parent.parent
    marker = tmp_path / "owned.txt"
    (run / "shadowpkg").mkdir()
    (run / "shadowpkg" / "__init__.py").write_text(PAYLOAD.format(marker=str(marker)))
    _name_class(folder, "shadowpkg:Net")
    monkeypatch.setattr(models_mod, "allowed_modules", lambda: frozenset({"shadowpkg"}))
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend(str(run))
    monkeypatch.syspath_prepend("")
    monkeypatch.delitem(sys.modules, "shadowpkg", raising=False)
    with pytest.raises(CheckpointError, match="cannot be imported"):
        load_model(run)
    assert not marker.exists() and "shadowpkg" not in sys.modules
    assert sys.path[0] == ""  # sys.path is restored after the import


def test_trust_class_must_be_the_class_the_folder_names(tmp_path: Path) -> None:
    folder = _saved(tmp_path)
    run = folder.parent.parent
    assert isinstance(load_model(run, trust_class=ToyLinear), ToyLinear)
    assert isinstance(load_model(run, trust_class="iclr26_shared.testing:ToyLinear"), ToyLinear)
    with pytest.raises(CheckpointError, match="not the trusted 'torch.nn.modules.linear:Linear'") as err:
        load_model(run, trust_class=torch.nn.Linear)
    _one_line(err)
    with pytest.raises(TypeError, match="expected a class"):
        load_model(run, trust_class=3)  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("os:system", "not from an installed iclr26 package"),
        ("builtins:eval", "not from an installed iclr26 package"),
        ("iclr26_shared.models:load_model", "not a model class with from_pretrained"),
        ("iclr26_shared.errors:CheckpointError", "not a model class with from_pretrained"),
        ("iclr26_shared.testing:NoSuchNet", "cannot be imported"),
        ("iclr26_shared.no_such_module:Net", "cannot be imported"),
        ("os.system", "expected 'package.module:ClassName'"),
        ("../evil:Net", "expected 'package.module:ClassName'"),
    ],
)
def test_a_class_name_that_is_not_an_allowed_model_class_is_one_line(tmp_path: Path, path: str, expected: str) -> None:
    folder = _saved(tmp_path)
    _name_class(folder, path)
    with pytest.raises(CheckpointError, match=expected) as err:
        load_model(folder.parent.parent)
    _one_line(err)


def _truncate(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(data[: len(data) - 5])


def _header_only(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(data[:6])


def _pickle(file: Path) -> None:
    file.write_bytes(pickle.dumps({"weight": [1.0, 2.0]}))


def _torch_zip(file: Path) -> None:
    torch.save({"weight": torch.ones(2, 3)}, file)


def _junk_header(file: Path) -> None:
    header = b"not json at all!"
    file.write_bytes(len(header).to_bytes(8, "little") + header)


def _missing(file: Path) -> None:
    file.unlink()


def _junk_config(file: Path) -> None:
    (file.parent / "config.json").write_text("{ not json")


def _wrong_config(file: Path) -> None:
    (file.parent / "config.json").write_text(json.dumps({"no_such_argument": 3}))


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (_truncate, "truncated"),
        (_header_only, "not a whole safetensors file"),
        (_pickle, "not a whole safetensors file"),
        (_torch_zip, "not a whole safetensors file"),
        (_junk_header, "header is not JSON"),
        (_missing, r"model\.safetensors: missing \(the model was saved with it\)"),
        (_junk_config, "from_pretrained cannot load it"),
        (_wrong_config, "from_pretrained cannot load it"),
    ],
)
def test_a_corrupted_model_folder_is_one_checkpoint_error_line(tmp_path: Path, damage: object, expected: str) -> None:
    folder = _saved(tmp_path)
    damage(folder / "model.safetensors")  # pyright: ignore[reportCallIssue]
    with pytest.raises(CheckpointError, match=expected) as err:
        load_model(folder.parent.parent)
    _one_line(err)


def test_the_save_manifest_names_a_missing_file_before_any_import(tmp_path: Path) -> None:
    """save_model records every file save_pretrained wrote (``files``: name -> bytes); a folder that lost one,
    weights or not, is refused by load_model before the class is imported, and flagged by model_problem (no
    import); a folder saved before the manifest existed keeps the older checks."""
    from iclr26_shared.models import list_models, model_problem

    folder = _saved(tmp_path)
    meta = json.loads((folder / "iclr26_model.json").read_text())
    assert meta["files"] == {p.name: p.stat().st_size for p in folder.iterdir() if p.name != "iclr26_model.json"}
    assert {"config.json", "model.safetensors"} <= set(meta["files"])  # and the mixin's README.md
    assert model_problem(list_models(folder.parent.parent)["net"]) is None
    (folder / "config.json").unlink()
    _name_class(folder, "evilmod:Net")  # refused for the missing file first: nothing is imported
    with pytest.raises(CheckpointError, match=r"config\.json: missing \(the model was saved with it\)") as err:
        load_model(folder.parent.parent)
    _one_line(err)
    assert "evilmod" not in sys.modules
    assert "config.json: missing" in str(model_problem(list_models(folder.parent.parent)["net"]))
    old = _saved(tmp_path / "old")  # as saved before the manifest: no "files"
    meta = json.loads((old / "iclr26_model.json").read_text())
    del meta["files"]
    (old / "iclr26_model.json").write_text(json.dumps(meta))
    (old / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match=r"no weights file \(\*\.safetensors\)"):
        load_model(old.parent.parent)
