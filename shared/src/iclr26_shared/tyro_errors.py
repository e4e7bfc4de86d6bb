"""tyro's parse failures as one-line :class:`~iclr26_shared.errors.UsageError`\\ s.

tyro (the one CLI parser of the workspace) reports a rejected command line in a box of several lines.
Our CLIs answer bad usage with exactly one line and exit 2 (``docs/architecture.md`` §2), so
:func:`one_line_parse_errors` registers tyro's parse-error hook: every failure arrives as a structured
event (which argument, which value, which choices) and is turned into one sentence here, before tyro
prints anything. Nothing is read back from tyro's rendered text.

The hook (``tyro._errors.on_parse_error``) is marked experimental by tyro, so the workspace pins tyro's
minor version (``shared/pyproject.toml``) and ``shared/tests/test_tyro_errors.py`` checks each event kind
the CLIs can meet; an event kind that a later tyro adds still gives one line (its class name and the
``--help`` hint), never a traceback.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from iclr26_shared.errors import UsageError

__all__ = ["describe_parse_error", "one_line_parse_errors"]


def _name(arg: Any) -> str:
    try:
        metavar = getattr(arg.lowered, "metavar", None)
        if arg.is_positional() and metavar:  # a positional is known to the user by its metavar (RUN_DIR)
            return str(metavar)
        return str(arg.display_name())
    except Exception:  # an internal tyro type we could not read: say nothing rather than crash
        return "an argument"


def describe_parse_error(event: Any) -> str:
    """One sentence for one of tyro's ``ParseErrorEvent``\\ s (no program name, no trailing period)."""
    from tyro import _errors as te

    if isinstance(event, te.InvalidChoice):
        choices = ", ".join(repr(c) for c in event.choices)
        return f"invalid choice {event.value!r} for argument '{_name(event.argument)}' (expected one of {choices})"
    if isinstance(event, te.BadValue):
        arg = event.argument
        if event.reason == "too_few_values":
            nargs = getattr(getattr(arg, "lowered", None), "nargs", None)
            want = f" (expected {nargs} values)" if isinstance(nargs, int) and nargs > 1 else ""
            return f"Missing value for argument '{_name(arg)}'{want}"
        return f"argument '{_name(arg)}' is fixed and cannot take the value {event.offending_value!r}"
    if isinstance(event, te.InstantiationFailure):
        where = f"{_name(event.argument)}: " if event.argument is not None else ""
        return f"{where}{event.message}"
    if isinstance(event, te.UnrecognizedArgs):
        return f"Unrecognized options: {' '.join(event.tokens)}"
    if isinstance(event, te.MissingArgs):
        names = ", ".join(_name(a.arg) for a in event.missing_arguments)
        return f"missing required argument(s): {names}"
    if isinstance(event, te.MissingSubcommand):
        names = ", ".join(event.subcommand_spec.parser_from_name)
        return f"expected a subcommand, one of: {names}"
    if isinstance(event, te.MutexConflict):
        return f"arguments {event.first_token} and {event.second_token} cannot be given together"
    if isinstance(event, te.MissingMutexGroup):
        groups = "; ".join(" or ".join(_name(a.arg) for a in g) for g in event.groups)
        return f"give one of: {groups}"
    if isinstance(event, te.SubcommandConflict):
        return f"subcommand {event.attempted!r} conflicts with the flag {event.trigger_flag!r}"
    return f"invalid arguments ({type(event).__name__})"


@contextlib.contextmanager
def one_line_parse_errors(prog: str) -> Iterator[None]:
    """Inside this block, a command line that tyro rejects raises ``UsageError("<prog>: <one line>")``
    (see ``prog --help``) instead of printing tyro's box; ``--help`` and successful parses are unchanged."""
    from tyro import _errors as te

    def hook(event: Any) -> None:
        raise UsageError(f"{prog}: {describe_parse_error(event)} (see {prog} --help)")

    with te.on_parse_error(hook):
        yield
