"""Light helpers shared by the methods' ``claims.py`` (no torch): numbers read back from ``results.json`` and
markdown tables for ``report.md``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["log10_or_nan", "markdown_table", "num"]


def num(value: Any) -> float:
    """A number from results.json (NaN is stored as null there)."""
    return math.nan if value is None else float(value)


def log10_or_nan(value: Any) -> float:
    """log10 of a positive finite number, NaN otherwise."""
    v = num(value)
    return math.log10(v) if v > 0 and math.isfinite(v) else math.nan


def markdown_table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """The lines of a markdown table through the shared :func:`iclr26_shared.tables.markdown_table` (strings are
    kept, numbers go through ``format_number``)."""
    from iclr26_shared.tables import markdown_table as shared_table

    return shared_table(list(head), [list(row) for row in rows]).splitlines()
