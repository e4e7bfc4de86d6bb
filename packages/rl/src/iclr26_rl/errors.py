"""The rl package's input error."""

from __future__ import annotations

from iclr26_shared.errors import Iclr26Error

__all__ = ["RLInputError"]


class RLInputError(Iclr26Error, ValueError):
    """Observations, frames or actions the networks cannot use; the message names the argument and the shape."""
