"""Atomic file writes and checked reads.

A killed process never leaves a half-written file under its final name: every write goes to a temporary
file in the same directory, is flushed and fsync'ed, then renamed over the target (``os.replace`` is
atomic on POSIX).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iclr26_shared.errors import DataError, Iclr26Error

__all__ = [
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "read_json",
    "to_jsonable",
    "unique_dir",
    "utc_stamp",
]


def utc_stamp() -> str:
    """The UTC time stamp used in every run and report directory name, e.g. ``20261130T211809Z``."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")


def unique_dir(parent: str | Path, name: str) -> Path:
    """Create ``parent/name`` (or, when another process made it first, ``name-2``, ``name-3``, ...)
    exclusively and return it: two commands started in the same second never share a folder (mkdir is
    atomic). An ``OSError`` other than "exists" (a full disk, a name too long) is a one-line
    :class:`~iclr26_shared.errors.UsageError`."""
    from iclr26_shared.errors import UsageError

    parent = Path(parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create the folder {parent}: {err.strerror or err}") from None
    for n in range(1, 10_000):
        path = parent / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as err:
            raise UsageError(f"cannot create the folder {path}: {err.strerror or err}") from None
        return path
    raise UsageError(f"cannot create a folder {name}-N under {parent}: 10000 exist")


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def to_jsonable(value: Any) -> Any:
    """The one JSON cleaner: NaN → null, ±inf → "inf"/"-inf", tuples → lists, paths → strings,
    dataclass instances → dicts of their fields, NumPy/torch scalars → Python numbers."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", 1) == 0:
        return to_jsonable(item())  # numpy / torch scalars
    if isinstance(value, Path):
        return str(value)
    return value


def atomic_write_json(path: str | Path, data: Any) -> Path:
    """Write ``data`` as indented JSON atomically; NaN becomes null and ±inf the strings "inf"/"-inf"."""
    return atomic_write_text(path, json.dumps(to_jsonable(data), indent=2, sort_keys=False) + "\n")


def read_json(path: str | Path, *, what: str = "JSON file", error: type[Iclr26Error] = DataError) -> Any:
    """Read JSON, raising ``error`` with a message naming the file when it is missing or corrupt."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise error(f"{what} {path} cannot be read: {err}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise error(
            f"{what} {path} is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}); it may be truncated"
        ) from None
