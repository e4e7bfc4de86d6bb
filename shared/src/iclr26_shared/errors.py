"""User-facing errors.

Every error a user can cause (a bad config value, a missing data set, a corrupt checkpoint) derives from
:class:`Iclr26Error`. The command lines turn these into one line on stderr and exit code 2; anything else
is an internal failure (exit code 1).
"""

from __future__ import annotations

from collections.abc import Iterable


class Iclr26Error(Exception):
    """Base class of errors caused by the user's input (exit code 2 on the command line)."""


class ConfigError(Iclr26Error, ValueError):
    """A config field holds a value the method cannot use.

    The message always names the field, the value and what was expected.
    """

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"config field '{field}' = {value!r}: expected {expected}")


class DataError(Iclr26Error):
    """A data set is absent or malformed; the message names the data set or file and what was expected."""


class CheckpointError(Iclr26Error):
    """A checkpoint or a saved run file is missing, truncated or not one of ours."""


class UsageError(Iclr26Error):
    """A command-line usage error (unknown method, unknown preset, bad flag)."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices`` to a mistyped ``word`` (difflib), else ``""``."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
