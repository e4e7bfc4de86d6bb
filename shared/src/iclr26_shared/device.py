"""Device selection for ``--device auto|cpu|cuda``."""

from __future__ import annotations

from typing import Literal

import torch

from iclr26_shared.errors import ConfigError

DeviceName = Literal["auto", "cpu", "cuda"]

__all__ = ["DeviceName", "describe_device", "resolve_device"]


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """Map ``auto`` to CUDA when available (else CPU); check that an explicit ``cuda`` exists.

    ``cuda:N`` selects a given GPU. An unknown name or an unavailable CUDA raises :class:`ConfigError`.
    """
    if isinstance(name, torch.device):
        name = str(name)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise ConfigError("device", name, "a CUDA device, but torch.cuda.is_available() is False (use cpu)")
        dev = torch.device(name)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ConfigError("device", name, f"an index below {torch.cuda.device_count()}")
        return dev
    raise ConfigError("device", name, "one of 'auto', 'cpu', 'cuda', 'cuda:N'")


def describe_device(device: torch.device) -> dict[str, object]:
    """What env.json records about a device."""
    info: dict[str, object] = {"device": str(device), "cuda_available": torch.cuda.is_available()}
    if device.type == "cuda":
        idx = device.index if device.index is not None else torch.cuda.current_device()
        info["cuda_name"] = torch.cuda.get_device_name(idx)
        info["cuda_version"] = torch.version.cuda
    else:
        info["torch_threads"] = torch.get_num_threads()
    return info
