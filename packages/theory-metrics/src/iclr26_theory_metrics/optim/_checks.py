"""Argument checks shared by the optimizers (torch style: ValueError naming the argument)."""

from __future__ import annotations

import math


def check_hyper(
    name: str, value: float, low: float = 0.0, high: float | None = None, *, high_open: bool = True
) -> None:
    """Raise ValueError unless ``low <= value`` (and ``value < high`` / ``<= high``) and finite."""
    bad = not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value < low
    if high is not None and not bad:
        bad = value >= high if high_open else value > high
    if bad:
        upper = "" if high is None else f" and {'<' if high_open else '<='} {high}"
        raise ValueError(f"invalid {name} {value!r}: expected a finite number >= {low}{upper}")
