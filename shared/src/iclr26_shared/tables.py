"""Markdown tables for reports: one helper instead of hand-written ``|---|`` rows (tabulate's ``github`` format).

    >>> print(markdown_table(["method", "acc"], [["ours", 0.91234], ["base", None]]))
    | method   | acc    |
    |----------|--------|
    | ours     | 0.9123 |
    | base     | —      |

Numbers go through :func:`iclr26_shared.runner.format_number` (4 significant digits, "—" for None/NaN)
unless ``floatfmt`` is given; a ``|`` inside a cell is escaped so it cannot split the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["markdown_table"]


def _cell(value: Any, floatfmt: str | None) -> str:
    from iclr26_shared.runner import format_number

    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        text = format(value, floatfmt) if floatfmt and value is not None else format_number(value)
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, floatfmt: str | None = None) -> str:
    """A GitHub-flavoured markdown table of ``rows`` under ``headers`` (every row as long as ``headers``)."""
    from tabulate import tabulate

    for i, row in enumerate(rows):
        if len(row) != len(headers):
            raise ValueError(f"markdown_table: row {i} has {len(row)} cells, the header {len(headers)}")
    body = [[_cell(v, floatfmt) for v in row] for row in rows]
    return tabulate(body, headers=[_cell(h, None) for h in headers], tablefmt="github", disable_numparse=True)
