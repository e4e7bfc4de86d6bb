"""A subdomain imported without its extra gives one line naming the extra (and exit code 2 on the CLI)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from iclr26_science import cli
from iclr26_science._extras import EXTRAS, MissingExtraError, missing_modules, require
from iclr26_shared.errors import UsageError
from iclr26_shared.testing import run_cli


def _hide(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``names`` look uninstalled to :func:`importlib.util.find_spec` (and drop them from sys.modules)."""
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name.split(".")[0] in names else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_installed_extra_passes() -> None:
    assert missing_modules("crystals") == []
    require("crystals", "iclr26_science.crystals")


def test_missing_extra_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "pyxtal", "e3nn")
    with pytest.raises(MissingExtraError) as err:
        require("crystals", "iclr26_science.crystals")
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("iclr26_science.crystals needs the 'crystals' extra (missing: e3nn, pyxtal)")
    assert "uv sync --package iclr26-science --extra crystals" in text
    assert "pip install 'iclr26-science[crystals]'" in text
    assert isinstance(err.value, ImportError) and isinstance(err.value, UsageError)


def test_blocked_import_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "esm", None)
    assert missing_modules("proteins") == ["esm"]


def test_importing_the_subdomain_without_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "spglib")
    for name in [m for m in sys.modules if m.startswith("iclr26_science.crystals")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(MissingExtraError, match=r"'crystals' extra \(missing: spglib\)"):
        importlib.import_module("iclr26_science.crystals")


def test_cli_turns_a_missing_extra_into_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _hide(monkeypatch, "ase")
    heavy = [m for m in sys.modules if m.startswith("iclr26_science.crystals") or m.endswith((".train", ".model"))]
    for name in heavy:  # the modules that import the extra's libraries (spec and config stay loaded)
        monkeypatch.delitem(sys.modules, name)
    res = run_cli(cli.main, ["crystal-fourier-transformer", "--preset", "smoke", "--out-dir", str(tmp_path)])
    assert res.code == 2, res.err
    lines = [line for line in res.err.splitlines() if line.strip()]
    assert lines[-1].startswith("error: iclr26_science.crystals needs the 'crystals' extra (missing: ase)")
    assert "Traceback" not in res.err


def test_every_extra_is_known() -> None:
    assert set(EXTRAS) == {"crystals", "cryoem", "fmri", "proteins"}
    with pytest.raises(KeyError, match="unknown extra"):
        missing_modules("nope")


def test_help_and_list_need_no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, *EXTRAS["crystals"])
    assert run_cli(cli.main, ["--help"]).code == 0
    res = run_cli(cli.main, ["crystal-fourier-transformer", "--help"])
    assert res.code == 0 and "--num-basis" in res.out


@pytest.mark.parametrize(
    ("method", "subdomain", "extra", "hidden"),
    [
        ("protein-ttt", "proteins", "proteins", "esm"),
        ("cryolvm", "cryoem", "cryoem", "mrcfile"),
        ("brain-semantoks", "fmri", "fmri", "nilearn"),
    ],
)
def test_a_method_without_its_extra_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, method: str, subdomain: str, extra: str, hidden: str
) -> None:
    _hide(monkeypatch, hidden)
    package = f"iclr26_science.{subdomain}"
    heavy = [m for m in sys.modules if m.startswith(package) or m.endswith((".train", ".model"))]
    for name in heavy:
        monkeypatch.delitem(sys.modules, name)
    res = run_cli(cli.main, [method, "--preset", "smoke", "--out-dir", str(tmp_path)])
    assert res.code == 2, res.err
    lines = [line for line in res.err.splitlines() if line.strip()]
    assert lines[-1].startswith(f"error: {package} needs the '{extra}' extra (missing: {hidden})")
    assert "Traceback" not in res.err
