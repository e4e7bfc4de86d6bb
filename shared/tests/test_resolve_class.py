"""resolve_class: the one policy by which saved configs name a user's class (issue 52 §1): given classes
first, then modules already imported or of this workspace, then explicit trust; never the current
directory or the saved folder, whose module would run its payload."""

import collections
import sys
from pathlib import Path

import pytest
import torch

from iclr26_shared.errors import CheckpointError
from iclr26_shared.models import resolve_class
from iclr26_shared.testing import ToyConfig, ToyLinear

PAYLOAD = "open({marker!r}, 'w').write('ran')\nclass Net:\n    pass\n"


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A folder shipping ``evil_resolve_mod.py`` (writes a marker file when imported), made the cwd."""
    folder, marker = tmp_path / "saved", tmp_path / "PAYLOAD_RAN"
    folder.mkdir()
    (folder / "evil_resolve_mod.py").write_text(PAYLOAD.format(marker=str(marker)))
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))  # even an explicit sys.path entry for it is taken off
    sys.modules.pop("evil_resolve_mod", None)
    return folder, marker


def test_a_module_in_the_cwd_or_saved_folder_never_runs(planted: tuple[Path, Path]) -> None:
    folder, marker = planted
    with pytest.raises(CheckpointError, match=r"^the class evil_resolve_mod:Net is not imported$"):
        resolve_class("evil_resolve_mod:Net")
    with pytest.raises(ValueError, match=r"^load: cannot import the user class evil_resolve_mod:Net") as err:
        resolve_class(
            "evil_resolve_mod:Net", trust=True, unsafe=[folder], error=ValueError, what="user class", prefix="load: "
        )
    assert "\n" not in str(err.value)
    assert not marker.exists() and "evil_resolve_mod" not in sys.modules


def test_given_classes_then_imported_or_workspace_modules_then_trust(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_class("somewhere.else:ToyLinear", classes=[ToyLinear]) is ToyLinear  # same QualName
    assert resolve_class(f"{ToyLinear.__module__}:ToyLinear") is ToyLinear  # a workspace package
    assert resolve_class("collections:OrderedDict") is collections.OrderedDict  # already imported
    monkeypatch.delitem(sys.modules, "wave", raising=False)  # a module not imported, outside the workspace
    with pytest.raises(CheckpointError, match=r"^x: wave:Wave_read \(wave\) refused$"):
        resolve_class("wave:Wave_read", classes=[ToyConfig], prefix="x: ", refused="{path} ({module}) refused")
    assert "wave" not in sys.modules
    assert resolve_class("wave:Wave_read", trust=True).__name__ == "Wave_read"  # trust imports it
    with pytest.raises(CheckpointError, match="is not a torch Module class"):
        resolve_class("iclr26_shared.testing:ToyConfig", base=torch.nn.Module)
    with pytest.raises(CheckpointError, match="is not a class"):
        resolve_class("os:getcwd")
    with pytest.raises(CheckpointError, match="expected 'package.module:ClassName'"):
        resolve_class("not a path")
    with pytest.raises(CheckpointError, match="cannot import the class iclr26_shared.testing:Nope"):
        resolve_class("iclr26_shared.testing:Nope")
