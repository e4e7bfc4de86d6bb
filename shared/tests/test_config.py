"""Config validation helpers and the checked JSON round trip."""

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import annotated_types as at
import pytest

from iclr26_shared.config import (
    MAX_INT,
    AllowInf,
    AllowLargeInt,
    AllowNaN,
    NonNegInt,
    PosFloat,
    PosInt,
    UnitFloat,
    config_from_dict,
    config_hash,
    config_to_dict,
    load_config,
    save_config,
    validate,
)
from iclr26_shared.errors import CheckpointError, ConfigError, DataError


@dataclass(frozen=True)
class Inner:
    width: int = 4
    """Width."""


@dataclass(frozen=True)
class Cfg:
    lr: PosFloat = 0.1
    """Learning rate."""
    mode: Literal["a", "b"] = "a"
    """Mode."""
    dims: tuple[int, ...] = (1, 2)
    """Dims."""
    pair: tuple[int, float] = (1, 2.0)
    """Pair."""
    path: Path = Path("x")
    """Path."""
    limit: float | None = None
    """Optional limit."""
    inner: Inner = field(default_factory=Inner)
    """Nested."""
    flag: bool = False
    """Flag."""
    horizon: Annotated[float, AllowInf] = float("inf")
    """Infinite by default (opted in: finite floats otherwise)."""
    missing: Annotated[float, AllowNaN] = 0.0
    """NaN is written as null (opted in)."""

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class Bounded:
    n: PosInt = 1
    """> 0."""
    k: NonNegInt = 0
    """>= 0."""
    p: UnitFloat = 0.5
    """In [0, 1]."""
    widths: tuple[PosInt, ...] = (4, 8)
    """Items > 0."""
    names: Annotated[tuple[str, ...], at.MinLen(1)] = ("a",)
    """At least one."""
    mode: Literal["a", "b"] = "a"
    """Choice."""
    beta: Annotated[float, at.Interval(ge=0, lt=1)] = 0.9
    """Half-open."""
    seq_len: Annotated[int, at.MultipleOf(8)] = 16
    """Multiple of 8."""
    limit: PosFloat | None = None
    """Optional, > 0 when set."""

    def __post_init__(self) -> None:
        validate(self)


def test_validate_accepts_the_defaults_and_ints_for_floats() -> None:
    assert Bounded(p=1, beta=0).p == 1


@pytest.mark.parametrize(
    ("kw", "field_name", "expected"),
    [
        ({"n": 0}, "n", "a number > 0"),
        ({"n": 1.5}, "n", "an integer"),
        ({"n": True}, "n", "an integer"),
        ({"k": -1}, "k", "a number >= 0"),
        ({"p": 1.5}, "p", "<= 1"),
        ({"p": float("nan")}, "p", "a finite number"),
        ({"widths": (4, 0)}, "widths[1]", "a number > 0"),
        ({"widths": "4,8"}, "widths", "a tuple (not a comma string)"),
        ({"widths": [4, 8]}, "widths", "a tuple"),
        ({"names": ()}, "names", "at least 1 item"),
        ({"mode": "c"}, "mode", "one of 'a', 'b'"),
        ({"beta": 1.0}, "beta", "< 1"),
        ({"seq_len": 12}, "seq_len", "a multiple of 8"),
        ({"limit": -2.0}, "limit", "a number > 0"),
    ],
)
def test_validate_names_field_value_and_expectation(kw: dict, field_name: str, expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        Bounded(**kw)
    assert err.value.field == field_name and expected in err.value.expected
    assert str(err.value).count("\n") == 0 and f"'{field_name}'" in str(err.value)


def test_round_trip_preserves_every_type() -> None:
    cfg = Cfg(lr=0.5, mode="b", dims=(3, 4), pair=(7, 0.5), path=Path("/a/b"), limit=2.0, inner=Inner(9), flag=True)
    cfg = dataclasses.replace(cfg, missing=float("nan"))
    data = config_to_dict(cfg)
    assert data["dims"] == [3, 4] and data["path"] == "/a/b" and data["inner"] == {"width": 9}
    assert data["horizon"] == "inf" and data["missing"] is None  # one JSON cleaner: NaN -> null
    back = config_from_dict(Cfg, data)
    assert back.missing != back.missing and back == dataclasses.replace(cfg, missing=back.missing)


def test_int_is_accepted_for_float_but_not_bool_for_int() -> None:
    assert config_from_dict(Cfg, {"lr": 1}).lr == 1.0
    with pytest.raises(ConfigError, match="inner.width"):
        config_from_dict(Cfg, {"inner": {"width": True}})


@pytest.mark.parametrize(
    ("data", "field_name", "expected"),
    [
        ({"lr": "fast"}, "lr", "a number"),
        ({"mode": "c"}, "mode", "one of 'a', 'b'"),
        ({"dims": [1, "x"]}, "dims[1]", "an integer"),
        ({"pair": [1]}, "pair", "2 items"),
        ({"flag": 1}, "flag", "true or false"),
        ({"nope": 1}, "nope", "a field of Cfg"),
        ({"lr": -1.0}, "lr", "> 0"),
    ],
)
def test_bad_values_name_field_value_and_expectation(data: dict, field_name: str, expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        config_from_dict(Cfg, data)
    assert err.value.field == field_name
    assert expected in str(err.value)
    assert repr(next(iter(data.values()))) in str(err.value) or field_name == "dims[1]"


def test_hash_is_stable_and_sensitive() -> None:
    assert config_hash(Cfg()) == config_hash(Cfg())
    assert config_hash(Cfg()) != config_hash(Cfg(lr=0.2))
    assert len(config_hash(Cfg())) == 8


def test_save_load_and_corrupt_files(tmp_path: Path) -> None:
    path = save_config(Cfg(lr=0.3), tmp_path / "c.json")
    assert load_config(Cfg, path) == Cfg(lr=0.3)
    path.write_text(path.read_text()[:20])  # truncated
    with pytest.raises((DataError, CheckpointError, ConfigError), match="not valid JSON.*truncated") as err:
        load_config(Cfg, path)
    assert str(path) in str(err.value)
    path.write_text('{"lr": "x"}')
    with pytest.raises(ConfigError, match="c.json: lr"):
        load_config(Cfg, path)
    with pytest.raises((DataError, CheckpointError, ConfigError), match="not found"):
        load_config(Cfg, tmp_path / "missing.json")


# --------------------------------------------------------------------------------------------------
# default bounds (issue 52 §3): finite floats, integers <= MAX_INT, unless a field opts in
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Defaults:
    lr: float = 0.1
    """A plain float: finite."""
    lrs: tuple[PosFloat, ...] = (0.1,)
    """Items finite."""
    limit: float | None = None
    """Optional, finite when set."""
    horizon: Annotated[float, at.Ge(0), AllowInf] = 1.0
    """May be inf (never NaN)."""
    score: Annotated[float, AllowNaN] = 0.0
    """May be NaN (never inf)."""
    hidden: PosInt = 8
    """A plain bounded integer."""
    plain: int = 0
    """No annotation at all."""
    widths: tuple[int, ...] = (1,)
    """Items bounded too."""
    budget: Annotated[int, at.Ge(0), AllowLargeInt] = 0
    """Opted out of the default bound."""
    own: Annotated[int, at.Interval(ge=0, lt=2**40)] = 0
    """Its own upper bound replaces the default."""

    def __post_init__(self) -> None:
        validate(self)


@pytest.mark.parametrize(
    ("kw", "field_name", "expected"),
    [
        ({"lr": float("inf")}, "lr", "a finite number"),
        ({"lr": float("-inf")}, "lr", "a finite number"),
        ({"lr": float("nan")}, "lr", "a finite number"),
        ({"lrs": (0.1, float("inf"))}, "lrs[1]", "a finite number"),
        ({"limit": float("inf")}, "limit", "a finite number"),
        ({"horizon": float("nan")}, "horizon", "not NaN"),
        ({"horizon": float("-inf")}, "horizon", ">= 0"),
        ({"score": float("inf")}, "score", "not +-inf"),
        ({"hidden": 10**20}, "hidden", f"<= {MAX_INT} (2**31 - 1"),
        ({"plain": 2**31}, "plain", f"<= {MAX_INT}"),
        ({"widths": (1, 2**40)}, "widths[1]", f"<= {MAX_INT}"),
        ({"own": 2**40}, "own", f"< {2**40}"),
    ],
)
def test_floats_are_finite_and_ints_bounded_by_default(kw: dict, field_name: str, expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        Defaults(**kw)
    assert err.value.field == field_name and expected in err.value.expected, err.value
    assert "\n" not in str(err.value)


def test_the_opt_ins_accept_what_they_name() -> None:
    cfg = Defaults(horizon=float("inf"), score=float("nan"), budget=10**20, own=2**40 - 1, plain=MAX_INT)
    assert cfg.horizon == float("inf") and cfg.score != cfg.score and cfg.budget == 10**20
    back = config_from_dict(Defaults, config_to_dict(cfg))  # inf -> "inf", NaN -> null and back
    assert back.horizon == float("inf") and back.score != back.score
    with pytest.raises(ConfigError, match="'lr' = inf: expected a finite number"):
        config_from_dict(Defaults, {"lr": "inf"})  # a hand-edited config.json cannot smuggle inf in
