"""Errors raised on bad graph input (a user error: exit code 2 on the command line)."""

from __future__ import annotations

from iclr26_shared.errors import DataError

__all__ = ["GraphInputError"]


class GraphInputError(DataError, ValueError):
    """A graph, its edge weights or its node features cannot be used; the message names the argument."""
