"""tyro's parse failures become one line each, from tyro's structured events (no text scraping)."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest
import tyro

from iclr26_shared.errors import UsageError
from iclr26_shared.testing import run_cli
from iclr26_shared.tyro_errors import describe_parse_error, one_line_parse_errors
from iclr26_shared.umbrella import main as umbrella_main


@dataclasses.dataclass(frozen=True)
class _Probe:
    lr: float = 0.1
    n: int = 3
    mode: Literal["a", "b"] = "a"
    pair: tuple[int, int] = (1, 2)
    fixed: tyro.conf.Fixed[int] = 7


@dataclasses.dataclass(frozen=True)
class _Needs:
    path: str


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--lr", "fast"], "p: --lr: could not convert string to float: 'fast' (see p --help)"),
        (["--n", "1.5"], "p: --n: invalid literal for int() with base 10: '1.5' (see p --help)"),
        (["--mode", "c"], "p: invalid choice 'c' for argument '--mode' (expected one of 'a', 'b') (see p --help)"),
        (["--mode"], "p: Missing value for argument '--mode' (see p --help)"),
        (["--pair", "1"], "p: Missing value for argument '--pair' (expected 2 values) (see p --help)"),
        (["--nope", "1"], "p: Unrecognized options: --nope 1 (see p --help)"),
        (["--fixed", "3"], "p: argument '--fixed' is fixed and cannot take the value '3' (see p --help)"),
    ],
)
def test_each_parse_failure_is_one_exact_line(argv: list[str], line: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError) as err, one_line_parse_errors("p"):
        tyro.cli(_Probe, args=argv, prog="p")
    assert str(err.value) == line
    assert capsys.readouterr().err == ""  # tyro printed nothing: the box never reaches the user


def test_missing_required_argument_names_it() -> None:
    with pytest.raises(UsageError, match=r"^p: missing required argument\(s\): --path \(see p --help\)$"):
        with one_line_parse_errors("p"):
            tyro.cli(_Needs, args=[], prog="p")


def test_an_event_kind_we_do_not_know_still_gives_one_line() -> None:
    @dataclasses.dataclass(frozen=True)
    class FutureEvent:
        prog: str

    assert describe_parse_error(FutureEvent("p")) == "invalid arguments (FutureEvent)"


def test_successful_parses_and_help_are_untouched(capsys: pytest.CaptureFixture[str]) -> None:
    with one_line_parse_errors("p"):
        assert tyro.cli(_Probe, args=["--lr", "0.5"], prog="p") == _Probe(lr=0.5)
        with pytest.raises(SystemExit) as exc:
            tyro.cli(_Probe, args=["--help"], prog="p")
    assert exc.value.code == 0 and "--lr" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["lst"], "error: iclr26: invalid choice 'lst' for the command (expected one of list, run, reproduce, "
                  "models, bench, data); did you mean 'list'?"),
        (["models"], "error: iclr26: missing required argument(s): RUN_DIR (see iclr26 --help)"),
        (["bench", "--bogus"], "error: iclr26: Unrecognized options: --bogus (see iclr26 --help)"),
        (["reproduce", "--seeds", "two"], "error: iclr26: --seeds: invalid literal for int() with base 10: 'two' "
                                          "(see iclr26 --help)"),
    ],
)  # fmt: skip
def test_umbrella_is_parsed_by_tyro_with_one_line_errors(argv: list[str], line: str) -> None:
    res = run_cli(umbrella_main, argv)
    assert res.code == 2 and res.err.strip() == line, res.err
