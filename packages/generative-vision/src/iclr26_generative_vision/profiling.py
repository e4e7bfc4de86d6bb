"""Peak tensor memory of a call, on CPU as well as CUDA (for the guider cost benchmark).

CUDA: ``torch.cuda.max_memory_allocated`` above the memory held before the call. CPU: a
``TorchDispatchMode`` counts the bytes of every tensor storage created during the call and subtracts them
again when the storage is freed (weak-reference finalizers), so the result is the peak of live tensor bytes
allocated by the call (inputs and weights that existed before are not counted, as on CUDA).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["peak_memory_bytes"]


class _LiveBytes(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._seen: set[int] = set()

    def _release(self, key: int, nbytes: int) -> None:
        self.live -= nbytes
        self._seen.discard(key)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                storage = t.untyped_storage()
                key = storage.data_ptr()
                if key in self._seen or storage.nbytes() == 0:
                    continue
                self._seen.add(key)
                self.live += storage.nbytes()
                self.peak = max(self.peak, self.live)
                weakref.finalize(storage, self._release, key, storage.nbytes())
        return out


def peak_memory_bytes(fn: Callable[[], Any], device: torch.device | str = "cpu") -> int:
    """Peak bytes of tensors allocated while ``fn()`` runs (see the module docstring)."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return int(torch.cuda.max_memory_allocated(device) - base)
    mode = _LiveBytes()
    with mode:
        fn()
    return int(mode.peak)
