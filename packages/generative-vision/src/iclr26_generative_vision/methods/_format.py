"""Number formatting shared by the methods' markdown reports (no heavy imports)."""

from __future__ import annotations

from typing import Any

__all__ = ["fmt"]


def fmt(x: Any) -> str:
    """``—`` for None, an int as it is, anything else as a float with 4 significant digits."""
    if x is None:
        return "—"
    if isinstance(x, int):
        return str(x)
    return f"{float(x):.4g}"
