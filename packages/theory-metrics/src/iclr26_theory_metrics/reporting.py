"""Light helpers shared by the methods' ``claims.py`` (no torch): numbers read back from ``results.json`` and
markdown tables for ``report.md``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from iclr26_shared.runner import format_number

__all__ = ["log10_or_nan", "markdown_table", "num"]


def num(value: Any) -> float:
    """A number from results.json (NaN is stored as null there)."""
    return math.nan if value is None else float(value)


def log10_or_nan(value: Any) -> float:
    """log10 of a positive finite number, NaN otherwise."""
    v = num(value)
    return math.log10(v) if v > 0 and math.isfinite(v) else math.nan


def markdown_table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """The lines of a markdown table; strings are kept, everything else goes through ``format_number``."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(v if isinstance(v, str) else format_number(v) for v in row) + " |" for row in rows]
    return lines
