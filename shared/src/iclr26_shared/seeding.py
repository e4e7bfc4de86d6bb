"""Seeding, determinism and RNG state capture (for bit-for-bit ``--resume``)."""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
import torch

__all__ = ["get_rng_state", "make_generator", "numpy_seed", "seed_everything", "set_rng_state"]


def seed_everything(seed: int, *, deterministic: bool = False) -> None:
    """Seed Python's ``random``, NumPy's global RNG and torch (CPU and every CUDA device).

    With ``deterministic=True`` torch is also asked for deterministic kernels (cuBLAS workspace config
    included); kernels without a deterministic version then raise instead of silently varying.
    """
    from iclr26_shared.errors import ConfigError
    from iclr26_shared.preflight import MAX_SEED

    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ConfigError("seed", seed, "an integer in [0, 2**63 - 1]")
    random.seed(seed)
    np.random.seed(numpy_seed(seed))
    torch.manual_seed(seed)
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False


def numpy_seed(seed: int) -> int | list[int]:
    """NumPy's legacy global seed for ``seed``: the seed itself below 2**32 (as always), else its 32-bit
    words, so that every 64-bit seed seeds NumPy differently (``seed % 2**32`` made 2**32 replay seed 0)."""
    if seed < 2**32:
        return seed
    words = []
    while seed:
        words.append(seed & 0xFFFFFFFF)
        seed >>= 32
    return words


def make_generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """A fresh ``torch.Generator`` on ``device`` seeded with ``seed`` (keeps method RNG streams apart)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def get_rng_state() -> dict[str, Any]:
    """Capture the global RNG states as tensors and plain values (loadable with ``weights_only=True``)."""
    py_version, py_state, py_gauss = random.getstate()
    np_name, np_keys, np_pos, np_has_gauss, np_gauss = np.random.get_state(legacy=True)
    state: dict[str, Any] = {
        "python": {"version": py_version, "state": torch.tensor(py_state, dtype=torch.int64), "gauss": py_gauss},
        "numpy": {
            "name": np_name,
            "keys": torch.from_numpy(np.asarray(np_keys, dtype=np.int64)),
            "pos": int(np_pos),
            "has_gauss": int(np_has_gauss),
            "gauss": float(np_gauss),
        },
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore the RNG states captured by :func:`get_rng_state`."""
    py = state["python"]
    random.setstate((py["version"], tuple(int(x) for x in py["state"].tolist()), py["gauss"]))
    npst = state["numpy"]
    np.random.set_state(
        (npst["name"], npst["keys"].numpy().astype(np.uint32), npst["pos"], npst["has_gauss"], npst["gauss"])
    )
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
