"""Seeding, determinism and RNG state capture (for bit-for-bit ``--resume``)."""

from __future__ import annotations

import contextlib
import functools
import os
import random
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

import numpy as np
import torch

__all__ = [
    "derive_seed",
    "get_rng_state",
    "global_rng",
    "keeps_global_rng",
    "make_generator",
    "numpy_seed",
    "seed_everything",
    "set_rng_state",
]

P = ParamSpec("P")
R = TypeVar("R")


def seed_everything(seed: int, *, deterministic: bool = False) -> None:
    """Seed Python's ``random``, NumPy's global RNG and torch (CPU and every CUDA device).

    With ``deterministic=True`` torch is also asked for deterministic kernels (cuBLAS workspace config
    included); kernels without a deterministic version then raise instead of silently varying.
    """
    from iclr26_shared.errors import ConfigError
    from iclr26_shared.preflight import MAX_SEED

    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ConfigError("seed", seed, f"an integer in [0, 2**32 - 1] = [0, {MAX_SEED}]")
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


def derive_seed(seed: int, *keys: int | str, bits: int = 63) -> int:
    """A seed for one library or stream, derived from the run's ``seed`` and ``keys`` with NumPy's
    ``SeedSequence`` (its hash of the whole entropy): any non-negative ``seed`` works and the result fits
    in ``bits`` bits (63: ``torch.manual_seed``/``torch.Generator``; 32: NumPy's legacy ``np.random.seed``),
    where ``seed * 1000 + k`` overflows for large seeds and collides across streams (seed 1, k 0 = seed 0,
    k 1000). ``keys`` name the stream (ints or strings: ``derive_seed(run.seed, "eval", dim)``)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        from iclr26_shared.errors import ConfigError

        raise ConfigError("seed", seed, "a non-negative integer")
    if not 1 <= bits <= 64:
        raise ValueError(f"bits={bits}: expected 1..64")
    words = [int.from_bytes(k.encode(), "little") if isinstance(k, str) else int(k) for k in keys]
    if any(w < 0 for w in words):
        raise ValueError(f"keys {keys!r}: expected non-negative integers or strings")
    state = np.random.SeedSequence(seed, spawn_key=tuple(words)).generate_state(2, np.uint32)
    return (int(state[0]) | int(state[1]) << 32) >> (64 - bits)


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


@contextlib.contextmanager
def global_rng() -> Iterator[None]:
    """Run the block with torch's (CPU and initialised CUDA devices), numpy's and Python's global random
    states restored on exit: a library call that seeds for its own reproducibility leaves the caller's
    random streams as if it had not run."""
    np_state, py_state = np.random.get_state(), random.getstate()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    try:
        with torch.random.fork_rng(devices=devices):
            yield
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)


def keeps_global_rng(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator: ``fn`` runs inside :func:`global_rng`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with global_rng():
            return fn(*args, **kwargs)

    return wrapper
