"""Optional dependencies ("extras") and the one-line error that names a missing one.

A method or backend whose extra is not installed raises :class:`MissingExtraError` before it imports
anything heavy: one line naming the extra and the install command, which the command lines turn into
``error: ...`` and exit code 2. Only :func:`importlib.util.find_spec` is used to look, so checking imports
nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable

from iclr26_shared.errors import UsageError

__all__ = ["MissingExtraError", "installed", "missing_modules", "require_extra"]


class MissingExtraError(UsageError, ImportError):
    """A feature was used without its extra installed (a user error: exit code 2 on the command line)."""


def installed(module: str) -> bool:
    """True when ``module`` can be imported (found without importing it)."""
    if module in sys.modules:
        return sys.modules[module] is not None  # None: an import of it was blocked
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The names in ``modules`` that cannot be imported."""
    return [m for m in modules if not installed(m)]


def require_extra(distribution: str, extra: str, modules: Iterable[str], *, needed_by: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``distribution[extra]`` is importable.

    Args:
        distribution: The package that declares the extra (``iclr26-sequence-models``).
        extra: The extra's name (``llm``).
        modules: The import names the extra provides.
        needed_by: What needs it, as the user named it (``restrain``, ``--backend ray``).
    """
    missing = missing_modules(modules)
    if missing:
        raise MissingExtraError(
            f"{needed_by} needs the {extra!r} extra of {distribution} (missing: {', '.join(missing)}): "
            f"pip install '{distribution}[{extra}]' (in the workspace: uv sync --package {distribution} "
            f"--extra {extra})"
        )
