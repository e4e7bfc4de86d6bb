"""Checks of the common flags that need no torch: a bad seed, device or output folder is a one-line error
(exit 2) in a fraction of a second, not after the 10–70 s it takes to import torch and build the data.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Sequence
from pathlib import Path

from iclr26_shared.errors import UsageError

__all__ = ["MAX_SEED", "check_device_name", "check_out_dir", "check_seed", "environment_error", "reject_empty_paths"]

#: Seeds are 0 <= seed <= MAX_SEED = 2**32 - 1: NumPy's legacy global seed takes exactly that range, and a
#: method's derived seeds (``seed * 1_000_003 + k`` and the like) stay inside torch's signed 64 bits, which
#: 2**63 - 1 itself overflowed (issue 52). New code derives its streams with
#: :func:`iclr26_shared.seeding.derive_seed` (numpy ``SeedSequence``), which takes any such seed.
MAX_SEED = 2**32 - 1

_DEVICE = re.compile(r"^(auto|cpu|cuda|cuda:\d+)$")


def check_seed(seed: object, flag: str = "--seed") -> int:
    """``seed`` as an int in ``[0, MAX_SEED]``, or a one-line :class:`UsageError` naming ``flag``."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise UsageError(f"{flag} {seed!r}: expected an integer in [0, 2**32 - 1] = [0, {MAX_SEED}]")
    return seed


def _has_nvidia_gpu() -> bool:
    """Whether an NVIDIA driver exposes a GPU here (what CUDA needs), read from /proc and /dev, without torch."""
    gpus = Path("/proc/driver/nvidia/gpus")
    if gpus.is_dir() and any(gpus.iterdir()):
        return True
    return any(Path("/dev").glob("nvidia[0-9]*"))


def check_device_name(device: str) -> str:
    """``device`` is auto/cpu/cuda/cuda:N, and a CUDA request has a GPU behind it (checked without torch;
    :func:`iclr26_shared.device.resolve_device` checks again with torch)."""
    if not _DEVICE.match(device):
        raise UsageError(f"--device {device!r}: expected one of auto, cpu, cuda, cuda:N")
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES") in ("", "-1")
    if device.startswith("cuda") and (hidden or not _has_nvidia_gpu()):
        raise UsageError(f"--device {device}: this machine shows no NVIDIA GPU (use --device cpu or auto)")
    return device


#: The longest file or folder name (bytes) the file systems we run on take (NAME_MAX).
NAME_MAX = 255


def check_out_dir(out_dir: Path, flag: str = "--out-dir") -> Path:
    """``out_dir`` is a folder, or can be created: every name in it fits the file system (NAME_MAX bytes)
    and its nearest existing ancestor is a writable folder."""
    path = Path(out_dir)
    for part in path.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise UsageError(
                f"{flag}: the name {part[:40]!r}... is {len(os.fsencode(part))} bytes; a file system name is at "
                f"most {NAME_MAX}"
            )
    probe = path
    try:
        while not probe.exists():
            if probe.parent == probe:
                break
            probe = probe.parent
        exists, is_dir = probe.exists(), probe.is_dir()
    except OSError as err:
        raise UsageError(f"{flag} {path}: cannot use it ({err.strerror or err})") from None
    if exists and not is_dir:
        why = "it is not a folder" if probe == path else f"{probe} is not a folder"
        raise UsageError(f"{flag} {path}: cannot create the run directory {path} ({why})")
    if exists and not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: cannot create the run directory {path} ({probe} is not writable)")
    return path


def reject_empty_paths(argv: Sequence[str], flags: Sequence[str] = ("--out-dir", "--root", "--resume")) -> None:
    """A path flag given as the empty string (``--out-dir=`` or ``--out-dir ''``) is a one-line
    :class:`UsageError`: parsed, it would be ``Path('.')`` and write into the current folder."""
    args = list(argv)
    for i, arg in enumerate(args):
        for flag in flags:
            if arg == f"{flag}=" or (arg == flag and i + 1 < len(args) and args[i + 1].strip() == ""):
                raise UsageError(f"{flag} '': expected a folder name (use {flag} . for the current folder)")


#: errno values of a write the machine refused (not a bug of ours): full disk or quota, name too long,
#: read-only file system, no permission.
_ENV_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.ENAMETOOLONG, errno.EROFS, errno.EACCES, errno.EPERM}
_ENV_WORDS = ("No space left on device", "Disk quota exceeded", "File name too long", "Read-only file system")


def environment_error(err: BaseException) -> str | None:
    """One line for an error the machine caused (a full disk, a name too long, a read-only folder), found in
    ``err`` or its causes (a ``SafetensorError`` or torch ``RuntimeError`` wrapping ``No space left on
    device`` included); ``None`` for anything else."""
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in _ENV_ERRNOS:
            where = f"{cur.filename}: " if cur.filename else ""
            return f"{where}{cur.strerror or os.strerror(cur.errno or 0)}"
        text = " ".join(str(cur).split())
        for words in _ENV_WORDS:
            if words in text:
                return text if len(text) <= 300 else text[:297] + "..."
        cur = cur.__cause__ or cur.__context__
    return None
