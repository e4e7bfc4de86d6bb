"""Keep the caller's global random state: the public training functions draw from their own seeds.

``fit``, ``merge``, ``merge_experts``, ``train_expert``, ... seed torch for reproducible initialisation
and dropout; :func:`keeps_global_rng` runs them inside :func:`torch.random.fork_rng` (CPU and every
initialised CUDA device) and restores numpy's and Python's global states too, so a caller's own random
stream continues as if the call had not happened.
"""

from __future__ import annotations

import contextlib
import functools
import random
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

import numpy as np
import torch

__all__ = ["global_rng", "keeps_global_rng"]

P = ParamSpec("P")
R = TypeVar("R")


@contextlib.contextmanager
def global_rng() -> Iterator[None]:
    """Run the block with torch's (CPU and initialised CUDA devices), numpy's and Python's global random
    states restored on exit."""
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
