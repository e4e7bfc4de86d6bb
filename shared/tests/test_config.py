"""Config validation helpers and the checked JSON round trip."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from iclr26_shared.config import (
    check_choice,
    check_fraction,
    check_positive,
    check_range,
    config_from_dict,
    config_hash,
    config_to_dict,
    load_config,
    save_config,
)
from iclr26_shared.errors import ConfigError


@dataclass(frozen=True)
class Inner:
    width: int = 4
    """Width."""


@dataclass(frozen=True)
class Cfg:
    lr: float = 0.1
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
    horizon: float = float("inf")
    """Infinite by default."""

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)


def test_round_trip_preserves_every_type() -> None:
    cfg = Cfg(lr=0.5, mode="b", dims=(3, 4), pair=(7, 0.5), path=Path("/a/b"), limit=2.0, inner=Inner(9), flag=True)
    data = config_to_dict(cfg)
    assert data["dims"] == [3, 4] and data["path"] == "/a/b" and data["inner"] == {"width": 9}
    assert data["horizon"] == "inf"
    assert config_from_dict(Cfg, data) == cfg


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


def test_check_helpers() -> None:
    check_range("x", 0.5, 0, 1)
    check_fraction("p", 1.0)
    check_choice("c", "a", ["a", "b"])
    check_positive("n", 0, allow_zero=True)
    for call in (
        lambda: check_range("x", 1.0, 0, 1, high_open=True),
        lambda: check_range("x", float("nan"), 0, 1),
        lambda: check_fraction("p", 1.5),
        lambda: check_choice("c", "z", ["a", "b"]),
        lambda: check_positive("n", 0),
        lambda: check_positive("n", float("inf")),
    ):
        with pytest.raises(ConfigError):
            call()


def test_hash_is_stable_and_sensitive() -> None:
    assert config_hash(Cfg()) == config_hash(Cfg())
    assert config_hash(Cfg()) != config_hash(Cfg(lr=0.2))
    assert len(config_hash(Cfg())) == 8


def test_save_load_and_corrupt_files(tmp_path: Path) -> None:
    path = save_config(Cfg(lr=0.3), tmp_path / "c.json")
    assert load_config(Cfg, path) == Cfg(lr=0.3)
    path.write_text(path.read_text()[:20])  # truncated
    with pytest.raises(Exception, match="not valid JSON.*truncated") as err:
        load_config(Cfg, path)
    assert str(path) in str(err.value)
    path.write_text('{"lr": "x"}')
    with pytest.raises(ConfigError, match="c.json: lr"):
        load_config(Cfg, path)
    with pytest.raises(Exception, match="not found"):
        load_config(Cfg, tmp_path / "missing.json")
