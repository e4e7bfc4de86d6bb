"""PEP 562 lazy exports for the domain packages' ``__init__`` modules (so importing them imports no torch).

Usage in a package ``__init__``::

    _EXPORTS = {"FGL": "iclr26_graphs.methods.fgl.model", ...}
    __all__ = [...]
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

with the same names imported under ``if TYPE_CHECKING:`` for type checkers.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], names: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module ``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps a public name to the module
    that defines it; the first access imports that module and caches the value in the package's namespace."""
    public = frozenset(names)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | public)

    return __getattr__, __dir__
