"""``--help`` shows every bound a config field declares: ``(default: 0.9; in (0, 1))``.

Config fields state their bounds with ``annotated-types`` (``Annotated[float, at.Interval(gt=0, lt=1)]``,
``tuple[PosInt, ...]``); :func:`iclr26_shared.config.validate` enforces them. tyro, which builds the
CLI, does not print them, so :func:`bounds_registry` adds a tyro struct rule: for every dataclass it lays out,
each field whose annotation carries constraints (directly, or on the items of a tuple) gets a help hint
``(default: <d>; <bound>)``. A field that already sets its own hint (``iclr26_shared.config._shown``) is
left alone. Bounds are written as the user would type them: ``> 0``, ``>= 2``, ``in [0, 1)``,
``a multiple of 8``, ``length >= 1``; a tuple's item bounds read ``each > 0``.

The rule wraps tyro's own dataclass rule (``tyro.constructors._struct_spec_dataclass``, internal: tyro's
minor version is pinned) and changes only the help hint, never parsing.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Annotated, Any, get_args, get_origin

import annotated_types as at

__all__ = ["bound_words", "bounds_registry"]


def _num(x: Any) -> str:
    if isinstance(x, float) and math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return str(x)


def _constraint_words(meta: Any) -> list[str]:
    if isinstance(meta, at.Interval):
        lo = ("(", meta.gt) if meta.gt is not None else ("[", meta.ge) if meta.ge is not None else None
        hi = (")", meta.lt) if meta.lt is not None else ("]", meta.le) if meta.le is not None else None
        if lo and hi:
            return [f"in {lo[0]}{_num(lo[1])}, {_num(hi[1])}{hi[0]}"]
        if lo:
            return [f"{'>' if lo[0] == '(' else '>='} {_num(lo[1])}"]
        if hi:
            return [f"{'<' if hi[0] == ')' else '<='} {_num(hi[1])}"]
        return []
    for cls, op, attr in ((at.Gt, ">", "gt"), (at.Ge, ">=", "ge"), (at.Lt, "<", "lt"), (at.Le, "<=", "le")):
        if isinstance(meta, cls):
            return [f"{op} {_num(getattr(meta, attr))}"]
    if isinstance(meta, at.MultipleOf):
        return [f"a multiple of {_num(meta.multiple_of)}"]
    if isinstance(meta, at.Len):
        if meta.max_length is None:
            return [f"length >= {meta.min_length}"] if meta.min_length else []
        return [f"length in [{meta.min_length}, {meta.max_length}]"]
    if isinstance(meta, at.MinLen):
        return [f"length >= {meta.min_length}"]
    if isinstance(meta, at.MaxLen):
        return [f"length <= {meta.max_length}"]
    if isinstance(meta, at.Predicate):
        doc = (getattr(meta.func, "__doc__", None) or "").strip().splitlines()
        return [doc[0].rstrip(".")] if doc else []
    return []


def _own_words(tp: Any) -> list[str]:
    if get_origin(tp) is not Annotated:
        return []
    words: list[str] = []
    for meta in get_args(tp)[1:]:
        if isinstance(meta, at.GroupedMetadata) and not isinstance(meta, at.Interval | at.Len):
            for m in meta:
                words += _constraint_words(m)
        else:
            words += _constraint_words(meta)
    return words


def _strip(tp: Any) -> Any:
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def bound_words(tp: Any) -> str:
    """The bounds of the annotation ``tp`` in words ("" when it declares none): its own constraints, and
    for a tuple the items' ("each > 0"; per position for a fixed-length tuple whose items differ)."""
    words = _own_words(tp)
    inner = _strip(tp)
    if get_origin(inner) is tuple:
        items = [a for a in get_args(inner) if a is not Ellipsis]
        per_item = [", ".join(_own_words(a)) for a in items]
        if any(per_item):
            if len(set(per_item)) == 1:
                words.append(f"each {per_item[0]}")
            else:
                words.append("items " + "; ".join(f"#{i + 1} {w}" for i, w in enumerate(per_item) if w))
    return ", ".join(words)


def _has_own_hint(tp: Any) -> bool:
    from tyro.conf import _confstruct

    return get_origin(tp) is Annotated and any(
        isinstance(m, _confstruct._ArgConfig) and m.help_behavior_hint is not None for m in get_args(tp)[1:]
    )


def _hinted(tp: Any) -> Any:
    import tyro

    if _has_own_hint(tp):
        return tp
    words = bound_words(tp)
    if not words:
        return tp
    return Annotated[tp, tyro.conf.arg(help_behavior_hint=lambda default: f"(default: {default}; {words})")]


@functools.cache
def bounds_registry() -> Any:
    """The tyro ``ConstructorRegistry`` holding the rule (built once, on first use)."""
    from tyro.constructors import ConstructorRegistry, StructConstructorSpec, StructTypeInfo
    from tyro.constructors._struct_spec_dataclass import dataclass_rule

    registry = ConstructorRegistry()

    @registry.struct_rule
    def bounds_in_help(info: StructTypeInfo) -> StructConstructorSpec | None:
        if not dataclasses.is_dataclass(info.type):
            return None
        spec = dataclass_rule(info)
        if spec is None:
            return None
        fields = tuple(dataclasses.replace(f, type=_hinted(f.type)) for f in spec.fields)
        return dataclasses.replace(spec, fields=fields)

    return registry
