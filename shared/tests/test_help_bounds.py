"""``--help`` shows the bounds that config fields declare with annotated-types (help_bounds.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
from typing import Annotated

import annotated_types as at
import pytest
import tyro

from iclr26_shared.config import PosFloat, PosInt, UnitFloat
from iclr26_shared.help_bounds import bound_words, bounds_registry


def _even(n: int) -> bool:
    """an even number."""
    return n % 2 == 0


@pytest.mark.parametrize(
    ("tp", "words"),
    [
        (int, ""),
        (PosInt, "> 0"),
        (UnitFloat, "in [0, 1]"),
        (Annotated[float, at.Interval(gt=0, lt=1)], "in (0, 1)"),
        (Annotated[float, at.Interval(ge=0, lt=1)], "in [0, 1)"),
        (Annotated[int, at.Interval(ge=0, lt=2**63)], f"in [0, {2**63})"),
        (Annotated[float, at.Interval(le=2.5)], "<= 2.5"),
        (Annotated[int, at.Ge(4), at.MultipleOf(2)], ">= 4, a multiple of 2"),
        (Annotated[int, at.Predicate(_even)], "an even number"),
        (tuple[PosFloat, ...], "each > 0"),
        (tuple[PosInt, UnitFloat], "items #1 > 0; #2 in [0, 1]"),
        (tuple[int, UnitFloat], "items #2 in [0, 1]"),
        (Annotated[tuple[PosInt, ...], at.MinLen(1)], "length >= 1, each > 0"),
        (Annotated[tuple[int, ...], at.Len(2, 4)], "length in [2, 4]"),
    ],
)
def test_bound_words(tp: object, words: str) -> None:
    assert bound_words(tp) == words


@dataclasses.dataclass(frozen=True)
class _Inner:
    rate: Annotated[float, at.Interval(gt=0, lt=1)] = 0.5
    """A rate."""


@dataclasses.dataclass(frozen=True)
class _Probe:
    width: Annotated[int, at.Ge(2)] = 8
    """A width."""
    sizes: tuple[PosInt, ...] = (1, 2)
    """Sizes."""
    steps: PosInt = 3
    """Steps (shown by its own marker)."""
    plain: int = 1
    """No bound."""
    inner: _Inner = _Inner()
    """Nested."""


def _help(registry: object) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        tyro.cli(_Probe, args=["--help"], registry=registry)  # pyright: ignore[reportCallIssue, reportArgumentType]
    return re.sub(r"[\s│]+", " ", out.getvalue())


def test_help_lines_carry_the_bounds_of_nested_and_tuple_fields() -> None:
    text = _help(bounds_registry())
    for hint in ("(default: 8; >= 2)", "(default: 1 2; each > 0)", "(default: 3; > 0)", "(default: 0.5; in (0, 1))"):
        assert hint in text, (hint, text)
    assert "(default: 1)" in text  # a field without bounds keeps tyro's plain hint, once
    assert text.count("; > 0)") == 1  # PosInt's own marker is not doubled


def test_without_the_rule_tyro_shows_no_custom_bound() -> None:  # the check above can fail
    text = _help(tyro.constructors.ConstructorRegistry())
    assert "(default: 8)" in text and ">= 2" not in text and "in (0, 1)" not in text


def test_the_rule_changes_help_only_not_parsing() -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        argv = ["--width", "5", "--inner.rate", "0.25", "--sizes", "4"]
        got = tyro.cli(_Probe, args=argv, registry=bounds_registry())
    assert got == _Probe(width=5, sizes=(4,), inner=_Inner(rate=0.25))
