"""Typed dataclass configs: one validation path and a checked JSON round trip.

Every method has one frozen ``@dataclass`` config (docs/architecture.md §2). Bounds are declared next to the field
with ``annotated-types`` constraints, and ``__post_init__`` calls :func:`validate`, which checks every
field's type and constraints and raises :class:`~iclr26_shared.errors.ConfigError` naming the field, the
value and what was expected::

    @dataclass(frozen=True)
    class FGLConfig:
        hidden: PosInt = 64
        '''Hidden width.'''
        dropout: UnitFloat = 0.5
        '''Dropout probability.'''
        lrs: tuple[PosFloat, ...] = (0.01, 0.005)
        '''Learning rates swept (a typed tuple, never a comma string).'''
        mode: Literal["guided", "uniform"] = "guided"
        '''Spanning-tree sampler.'''

        def __post_init__(self) -> None:
            validate(self)
            if self.k > self.n:  # only cross-field rules by hand
                raise ConfigError("k", self.k, f"at most n = {self.n}")

:func:`config_to_dict` / :func:`config_from_dict` convert to and from plain JSON values and check every
value against the field's annotation, so a hand-edited ``config.json`` with a wrong type fails with a
clear message instead of running with a silently wrong value.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast, get_args, get_origin, get_type_hints

import annotated_types as at

from iclr26_shared.errors import ConfigError

C = TypeVar("C")

__all__ = [
    "MAX_INT",
    "AllowInf",
    "AllowLargeInt",
    "AllowNaN",
    "NonNegFloat",
    "NonNegInt",
    "PosFloat",
    "PosInt",
    "UnitFloat",
    "ConfigError",
    "config_from_dict",
    "config_hash",
    "config_to_dict",
    "latest_run_dir",
    "load_config",
    "replace_config",
    "run_hash",
    "save_config",
    "stable_hash",
    "validate",
]


def _shown(bound: str) -> Any:
    """A tyro marker that adds the bound to the field's ``--help`` line: ``(default: 64; > 0)``."""
    import tyro

    return tyro.conf.arg(help_behavior_hint=lambda default: f"(default: {default}; {bound})")


#: An integer > 0.
PosInt = Annotated[int, at.Gt(0), _shown("> 0")]
#: An integer >= 0.
NonNegInt = Annotated[int, at.Ge(0), _shown(">= 0")]
#: A float > 0.
PosFloat = Annotated[float, at.Gt(0), _shown("> 0")]
#: A float >= 0.
NonNegFloat = Annotated[float, at.Ge(0), _shown(">= 0")]
#: A float in [0, 1] (probabilities, fractions).
UnitFloat = Annotated[float, at.Interval(ge=0, le=1), _shown("in [0, 1]")]

#: The default upper bound of every integer field that declares none (``Le``, ``Lt`` or an ``Interval``
#: with a top): 2**31 - 1, so ``--hidden 10**20`` is a one-line :class:`ConfigError`, never a torch
#: ``TypeError`` or an allocation of 10**20 elements. A field that needs more says so with
#: :data:`AllowLargeInt` (or its own ``at.Le``).
MAX_INT = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class _Marker:
    name: str

    def __repr__(self) -> str:
        return self.name


#: Opt-in for a float field (or a tuple's float items) that may be ``inf``/``-inf``:
#: ``Annotated[float, AllowInf]``; its docstring should say what ``inf`` means. NaN stays refused. Every
#: other float field must be finite (``allow_inf_nan=False``): ``--lr inf`` is a one-line ConfigError.
AllowInf = _Marker("AllowInf")
#: Opt-in for a float field that may be NaN (e.g. "not measured", written as null in JSON):
#: ``Annotated[float, AllowNaN]``; infinities stay refused unless the field is also :data:`AllowInf`.
AllowNaN = _Marker("AllowNaN")
#: Opt-out of :data:`MAX_INT` for an integer field: ``Annotated[int, at.Ge(0), AllowLargeInt]``.
AllowLargeInt = _Marker("AllowLargeInt")


# --------------------------------------------------------------------------------------------------
# validate(): types and annotated-types constraints of every field
# --------------------------------------------------------------------------------------------------

_ADAPTERS: dict[type, Any] = {}
#: Per config class: the words for each ``at.Predicate`` (its function's docstring), by function name.
_PREDICATES: dict[type, dict[str, str]] = {}


def _predicate_words(tp: Any, out: dict[str, str]) -> None:
    if get_origin(tp) is Annotated:
        for meta in get_args(tp)[1:]:
            if isinstance(meta, at.Predicate):
                name = getattr(meta.func, "__name__", "")
                out[name] = (meta.func.__doc__ or "").strip() or f"satisfying {name}"
    for arg in get_args(tp):
        if arg is not Ellipsis and not isinstance(arg, str | int | float | bool):
            _predicate_words(arg, out)


def _adapter(cls: type) -> Any:
    """One pydantic ``TypeAdapter`` per config class, over a TypedDict of its fields' annotations (strict:
    no coercion; pydantic reads the ``annotated-types`` bounds natively)."""
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import ConfigDict, TypeAdapter
        from typing_extensions import TypedDict

        hints = get_type_hints(cls, include_extras=True)
        fields = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
        words: dict[str, str] = {}
        for name, tp in fields.items():
            _reject_mutable(tp, name)
            fields[name] = tp = _default_bounds(tp)
            _predicate_words(tp, words)
        _PREDICATES[cls] = words
        typed = TypedDict(f"{cls.__name__}Fields", fields)  # pyright: ignore[reportArgumentType]
        setattr(  # noqa: B010
            typed, "__pydantic_config__", ConfigDict(strict=True, arbitrary_types_allowed=True, allow_inf_nan=False)
        )
        adapter = _ADAPTERS[cls] = TypeAdapter(typed)
    return adapter


def _not_nan(x: float) -> bool:
    """a number or +-inf (not NaN)"""
    return not math.isnan(x)


def _not_inf(x: float) -> bool:
    """a finite number or NaN (not +-inf)"""
    return not math.isinf(x)


def _has_top(meta: Any) -> bool:
    if isinstance(meta, at.Le | at.Lt):
        return True
    return isinstance(meta, at.Interval) and (meta.le is not None or meta.lt is not None)


def _default_bounds(tp: Any) -> Any:
    """``tp`` with the workspace's default bounds added for pydantic (the annotation tyro and ``--help``
    read is left alone): ints without an upper bound get ``<= MAX_INT`` unless marked
    :data:`AllowLargeInt`; floats marked :data:`AllowInf` may be infinite and :data:`AllowNaN` NaN
    (otherwise the adapter's ``allow_inf_nan=False`` refuses both). Recurses into
    ``Annotated``, tuples and unions; other types pass through."""
    import types
    from typing import Union

    from pydantic import AllowInfNan

    origin, args = get_origin(tp), get_args(tp)
    if tp is int:
        return Annotated[int, at.Le(MAX_INT)]
    if origin is Annotated:
        base, meta = args[0], list(args[1:])
        if base is int:
            if not any(m is AllowLargeInt or _has_top(m) for m in meta):
                meta.append(at.Le(MAX_INT))
        elif base is float:
            inf, nan = any(m is AllowInf for m in meta), any(m is AllowNaN for m in meta)
            if inf or nan:
                meta.append(AllowInfNan(True))
            if inf != nan:
                meta.append(at.Predicate(_not_nan if inf else _not_inf))
        else:
            base = _default_bounds(base)
        return Annotated[(base, *meta)]  # pyright: ignore[reportInvalidTypeArguments]
    if origin is tuple and args:
        return tuple[tuple(a if a is Ellipsis else _default_bounds(a) for a in args)]  # pyright: ignore[reportInvalidTypeArguments]
    if origin in (Union, types.UnionType):
        return Union[tuple(_default_bounds(a) for a in args)]  # pyright: ignore[reportInvalidTypeArguments]  # noqa: UP007
    return tp


def _reject_mutable(tp: Any, where: str) -> None:
    origin = get_origin(tp)
    if origin in (list, dict, set) or tp in (list, dict, set):
        raise TypeError(f"config field '{where}': use a tuple (frozen configs hold no lists or dicts), got {tp!r}")
    for arg in get_args(tp):
        if arg is not Ellipsis and not isinstance(arg, str | int | float | bool):
            _reject_mutable(arg, where)


_BOUND_WORDS = {"greater_than": ("gt", ">"), "greater_than_equal": ("ge", ">="), "less_than": ("lt", "<")}
_BOUND_WORDS["less_than_equal"] = ("le", "<=")
_TYPE_WORDS = {
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "path_type": "a path",
    "none_required": "None",
    "finite_number": "a finite number",
}


def _expected(err: Mapping[str, Any], predicates: Mapping[str, str]) -> str:
    """Our words for one pydantic error (``ConfigError.expected``)."""
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    if kind == "predicate_failed":
        name = str(err.get("msg", "")).removeprefix("Predicate ").removesuffix(" failed").strip("'")
        return predicates.get(name, f"satisfying {name}")
    if kind in _BOUND_WORDS:
        key, op = _BOUND_WORDS[kind]
        raw = ctx.get(key)
        bound = str(raw) if isinstance(raw, int) else f"{raw:g}" if isinstance(raw, float) else str(raw)
        if raw == MAX_INT and kind == "less_than_equal":
            bound += " (2**31 - 1, the default bound of an integer field)"
        nan = isinstance(value, float) and math.isnan(value)
        return f"a number {op} {bound}" + (" (not NaN)" if nan else "")
    if kind in _TYPE_WORDS:
        return _TYPE_WORDS[kind]
    if kind == "literal_error":
        return f"one of {str(ctx.get('expected', '')).replace(' or ', ', ')}"
    if kind == "multiple_of":
        return f"a multiple of {ctx.get('multiple_of')}"
    if kind == "too_short":
        return f"at least {ctx.get('min_length')} item(s)"
    if kind == "too_long":
        return f"at most {ctx.get('max_length')} item(s)"
    if kind == "tuple_type":
        return "a tuple (not a comma string)" if isinstance(value, str) else "a tuple"
    if kind in ("is_instance_of", "dataclass_exact_type", "dataclass_type", "model_type"):
        cls = ctx.get("class") or ctx.get("class_name") or "instance of the annotated type"
        return f"a {cls}"
    msg = str(err.get("msg", "a valid value"))
    return msg.removeprefix("Input should be ").removeprefix("Value error, ")


def _field_path(loc: tuple[Any, ...]) -> str:
    """``("lrs", 1)`` -> ``"lrs[1]"`` (union member tags, which are strings, are dropped)."""
    return str(loc[0]) + "".join(f"[{x}]" for x in loc[1:] if isinstance(x, int))


def validate(cfg: object) -> None:
    """Check every field of the dataclass ``cfg`` against its annotation and its ``annotated-types``
    constraints (``Gt``, ``Ge``, ``Lt``, ``Le``, ``Interval``, ``MultipleOf``, ``MinLen``, ``MaxLen``,
    ``Len``, ``Predicate``; items of typed tuples too) with pydantic in strict mode; raises
    :class:`ConfigError` naming the first bad field, its value and what was expected (for a union, what
    each member expected). Call it first thing in ``__post_init__``; write only cross-field rules by hand
    after it."""
    from pydantic import ValidationError

    cls = type(cfg)
    if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
        raise TypeError(f"validate() expects a dataclass instance, got {cls.__name__}")
    values = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}
    try:
        _adapter(cls).validate_python(values)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        where = _field_path(errors[0]["loc"])
        same = [e for e in errors if _field_path(e["loc"]) == where]
        expected = " or ".join(dict.fromkeys(_expected(e, _PREDICATES.get(cls, {})) for e in same))
        value = values.get(where, errors[0].get("input")) if "[" not in where else errors[0].get("input")
        raise ConfigError(where, value, expected) from None


# --------------------------------------------------------------------------------------------------
# JSON round trip
# --------------------------------------------------------------------------------------------------


def _require_dataclass_type(cls: type) -> None:
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{cls!r} is not a dataclass type")


def _to_json(value: Any) -> Any:
    from iclr26_shared.io import to_jsonable

    return to_jsonable(value)


def config_to_dict(cfg: object) -> dict[str, Any]:
    """Return the config as plain JSON values (tuples become lists, paths strings, nested dicts)."""
    if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
        raise TypeError(f"expected a dataclass instance, got {type(cfg).__name__}")
    return {f.name: _to_json(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)}


_JSON_ADAPTERS: dict[Any, Any] = {}


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """Read the JSON value ``value`` as the annotated type ``tp`` (pydantic, strict JSON mode: arrays become
    tuples, strings paths, objects nested configs; "3" is not an integer), or raise ConfigError naming
    ``where``. NaN and infinities, which JSON cannot hold, are read back from null and "nan"/"inf"."""
    from pydantic import TypeAdapter, ValidationError

    base = get_args(tp)[0] if get_origin(tp) is Annotated else tp
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        if not isinstance(value, Mapping):
            raise ConfigError(where, value, f"a JSON object for {base.__name__}")
        return config_from_dict(base, value, _prefix=f"{where}.")
    if base is float and (value is None or value in ("nan", "inf", "-inf")):
        return math.nan if value is None else float(value)
    adapter = _JSON_ADAPTERS.get(tp)
    if adapter is None:
        adapter = _JSON_ADAPTERS[tp] = TypeAdapter(tp)
    try:
        return adapter.validate_json(json.dumps(value), strict=True)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        if err["type"] == "missing" and get_origin(base) is tuple:  # a fixed-length tuple with too few items
            raise ConfigError(where, value, f"{len(get_args(base))} items") from None
        loc = "".join(f"[{x}]" for x in err["loc"] if isinstance(x, int))
        raise ConfigError(where + loc, err.get("input", value), _expected(err, {})) from None
    except TypeError as exc:  # an annotation pydantic cannot read from JSON
        raise TypeError(f"config field '{where}': the JSON round trip does not support {tp!r}") from exc


def config_from_dict(cls: type[C], data: Mapping[str, Any], *, _prefix: str = "") -> C:
    """Build ``cls`` from JSON values, checking every value against its field's annotation.

    Unknown keys and wrongly typed values raise :class:`ConfigError`; missing keys take the field's
    default. The dataclass's own ``__post_init__`` validation runs as usual.
    """
    _require_dataclass_type(cls)
    if not isinstance(data, Mapping):
        raise ConfigError(_prefix.rstrip(".") or cls.__name__, data, "a JSON object")
    hints = get_type_hints(cls, include_extras=True)
    fields = {f.name: f for f in dataclasses.fields(cast(Any, cls)) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(
            _prefix + unknown[0], data[unknown[0]], f"a field of {cls.__name__} ({', '.join(sorted(fields))})"
        )
    kwargs = {name: _coerce(value, hints[name], _prefix + name) for name, value in data.items()}
    return cls(**kwargs)


def replace_config(cfg: C, **changes: Any) -> C:
    """``dataclasses.replace`` that re-runs validation (frozen configs are replaced, never mutated)."""
    return dataclasses.replace(cfg, **changes)  # type: ignore[type-var]


def stable_hash(data: Any, length: int = 8) -> str:
    """A short SHA-256 hex digest of JSON ``data`` (keys sorted, so dict order does not matter)."""
    blob = json.dumps(_to_json(data), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


def run_hash(cfg: object, seed: int) -> str:
    """Hash of config and seed: two runs with the same hash compute the same thing (the suffix of a run
    directory's name, ``<UTC time>-<hash>``)."""
    return stable_hash({"config": config_to_dict(cfg), "seed": seed})


def latest_run_dir(method_dir: str | Path, cfg: object, seed: int) -> Path | None:
    """The newest run directory of ``cfg`` and ``seed`` under ``method_dir`` (one with a ``config.json``), or
    None: the run ``--resume`` continues or reads back."""
    digest = run_hash(cfg, seed)
    matches = sorted(p for p in Path(method_dir).glob(f"*-{digest}") if (p / "config.json").is_file())
    return matches[-1] if matches else None


def config_hash(cfg: object, length: int = 8) -> str:
    """A short, stable hash of the config's JSON form."""
    return stable_hash(config_to_dict(cfg), length)


def save_config(cfg: object, path: str | Path) -> Path:
    """Write the config as indented JSON, atomically."""
    from iclr26_shared.io import atomic_write_json

    return atomic_write_json(path, config_to_dict(cfg))


def load_config(cls: type[C], path: str | Path) -> C:
    """Read a config written by :func:`save_config`; a missing, corrupt or mistyped file names itself."""
    from iclr26_shared.io import read_json

    data = read_json(path, what=f"{cls.__name__} config")
    try:
        return config_from_dict(cls, data)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err.field}", err.value, err.expected) from None
