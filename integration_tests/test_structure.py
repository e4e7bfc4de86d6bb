"""The method contract, checked mechanically (docs/architecture.md §2, §8), in the style of Flower
baselines' structure checks: every method folder has the file set, every spec is built by
``MethodSpec.from_module``, every config field has a docstring, and every ``PRESETS`` holds the three
presets of the config's own type."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import textwrap
from pathlib import Path
from typing import Any

import pytest

from iclr26_shared.spec import PRESET_NAMES, LazyFunction, MethodSpec
from iclr26_shared.umbrella import discover_methods

ROOT = Path(__file__).resolve().parents[1]
SPECS, ERRORS = discover_methods()
FILE_SET = ("__init__.py", "config.py", "spec.py", "train.py", "claims.py")
METHOD_DIRS = sorted(p for p in ROOT.glob("packages/*/src/*/methods/*") if p.is_dir() and p.name != "__pycache__")


def test_every_domain_loads_and_all_nineteen_methods_are_registered() -> None:
    assert not ERRORS, ERRORS
    assert len(SPECS) == 19, sorted(SPECS)
    assert len(METHOD_DIRS) == 19, [p.name for p in METHOD_DIRS]


@pytest.mark.parametrize("folder", METHOD_DIRS, ids=lambda p: p.name)
def test_method_folder_has_the_file_set(folder: Path) -> None:
    missing = [f for f in FILE_SET if not (folder / f).is_file()]
    assert not missing, f"{folder.relative_to(ROOT)} lacks {missing}"
    name = folder.name.replace("_", "-")
    assert name in SPECS, f"{folder.name}: no registered method {name!r}"
    readme = (folder.parents[3] / "README.md").read_text()
    assert name in readme, f"the package README has no section naming {name}"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_is_built_by_from_module(name: str) -> None:
    spec: MethodSpec[Any] = SPECS[name]
    module = f"iclr26_{spec.domain.replace('-', '_')}.methods.{name.replace('-', '_')}"
    for attr, fn in (("train", spec.run), ("claims", spec.claims), ("claims", spec.report), ("train", spec.dry_run)):
        assert isinstance(fn, LazyFunction) and fn.module == f"{module}.{attr}", (name, attr, fn)
    assert set(PRESET_NAMES) <= set(spec.presets)
    assert all(type(p) is spec.config for p in spec.presets.values())


def _undocumented_fields(cls: type) -> list[str]:
    """Fields of dataclass ``cls`` with no string literal right after them (the docstring tyro shows)."""
    missing: list[str] = []
    for klass in cls.__mro__:
        if not dataclasses.is_dataclass(klass) or klass is object:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        body = tree.body[0].body  # pyright: ignore[reportAttributeAccessIssue]
        for i, node in enumerate(body):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                nxt = body[i + 1] if i + 1 < len(body) else None
                documented = (
                    isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant)
                    and isinstance(nxt.value.value, str)
                )
                if not documented and "ClassVar" not in ast.unparse(node.annotation):
                    missing.append(f"{klass.__name__}.{node.target.id}")
    return missing


def _config_classes(cls: type, seen: set[type] | None = None) -> list[type]:
    """``cls`` and the dataclass types of its fields' defaults (nested configs)."""
    seen = seen if seen is not None else set()
    if cls in seen:
        return []
    seen.add(cls)
    out = [cls]
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else None
        if default is not None and dataclasses.is_dataclass(default) and not isinstance(default, type):
            out += _config_classes(type(default), seen)
    return out


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_config_field_has_a_docstring(name: str) -> None:
    spec = SPECS[name]
    importlib.import_module(spec.config.__module__)
    missing = [m for cls in _config_classes(spec.config) for m in _undocumented_fields(cls)]
    assert not missing, f"{name}: config fields without a docstring (it is their --help text): {missing}"


def test_the_docstring_check_can_fail() -> None:
    @dataclasses.dataclass(frozen=True)
    class Bad:
        a: int = 1
        """documented"""
        b: int = 2

    assert _undocumented_fields(Bad) == ["Bad.b"]


def test_docstrings_cite_the_architecture_in_the_repository() -> None:
    cites = [
        str(p.relative_to(ROOT))
        for p in [*ROOT.glob("shared/src/**/*.py"), *ROOT.glob("packages/*/src/**/*.py")]
        if "DESIGN.md" in p.read_text()
    ]
    assert not cites, f"cite docs/architecture.md, not DESIGN.md (not in the repository): {cites}"
    assert (ROOT / "docs" / "architecture.md").is_file()


def _help_text(name: str) -> str:
    import contextlib
    import io
    import re

    from iclr26_shared.cli import parse_method_args

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parse_method_args(SPECS[name], ["--help"], prog=name)
    return re.sub(r"[\s│]+", " ", out.getvalue())  # tyro wraps help in a box: one line, no box


@pytest.mark.parametrize("name", sorted(SPECS))
def test_help_shows_every_bound_a_config_field_declares(name: str) -> None:
    from typing import get_type_hints

    from iclr26_shared.help_bounds import bound_words

    text = _help_text(name)
    missing = []
    for cls in _config_classes(SPECS[name].config):
        for field, tp in get_type_hints(cls, include_extras=True).items():
            words = bound_words(tp)
            if words and f"; {words})" not in text and f"; {words.split(', ')[0]}" not in text:
                missing.append(f"{cls.__name__}.{field}: {words}")
    assert not missing, f"{name}: bounds not in --help: {missing}"
