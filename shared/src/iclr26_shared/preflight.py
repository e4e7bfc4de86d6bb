"""Checks of the common flags that need no torch: a bad seed, device or output folder is a one-line error
(exit 2) in a fraction of a second, not after the 10–70 s it takes to import torch and build the data.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from iclr26_shared.errors import UsageError

__all__ = ["MAX_SEED", "check_device_name", "check_out_dir", "check_seed"]

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


def check_out_dir(out_dir: Path, flag: str = "--out-dir") -> Path:
    """``out_dir`` is a folder, or can be created: its nearest existing ancestor is a writable folder."""
    path = Path(out_dir)
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        why = "it is not a folder" if probe == path else f"{probe} is not a folder"
        raise UsageError(f"{flag} {path}: cannot create the run directory {path} ({why})")
    if probe.exists() and not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: cannot create the run directory {path} ({probe} is not writable)")
    return path
