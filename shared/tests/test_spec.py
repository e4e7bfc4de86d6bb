"""MethodSpec validation and Claim round trip."""

import dataclasses
from dataclasses import dataclass

import pytest

from iclr26_shared.errors import UsageError
from iclr26_shared.spec import Claim, MethodSpec
from iclr26_shared.testing import TOY_SPEC, ToyConfig


@dataclass
class Mutable:
    x: int = 1


@dataclass(frozen=True)
class WithSeed:
    seed: int = 0


def _spec(**kw):
    base = dict(name="a-b", domain="d", paper="p", config=ToyConfig, run=lambda c, r: {})
    base["presets"] = {p: ToyConfig() for p in ("smoke", "quick", "full")}
    base.update(kw)
    return MethodSpec(**base)


def test_valid_spec() -> None:
    assert _spec().preset("smoke") == ToyConfig()


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"name": "Bad_Name"}, "kebab-case"),
        ({"presets": {"smoke": ToyConfig()}}, "missing"),
        ({"config": Mutable, "presets": {p: Mutable() for p in ("smoke", "quick", "full")}}, "frozen"),
        ({"config": WithSeed, "presets": {p: WithSeed() for p in ("smoke", "quick", "full")}}, "clash"),
        ({"presets": {"smoke": ToyConfig(), "quick": ToyConfig(), "full": WithSeed()}}, "not a ToyConfig"),
    ],
)
def test_invalid_specs_are_rejected(kw: dict, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        _spec(**kw)


def test_unknown_preset_lists_choices() -> None:
    with pytest.raises(UsageError, match="choose from smoke, quick, full"):
        TOY_SPEC.preset("paper")


def test_claim_round_trip_and_check() -> None:
    c = Claim("c", "m", 1.0, None, True, "0.9")
    assert Claim.from_dict(c.to_dict()) == c
    bad = dataclasses.replace(TOY_SPEC, claims=lambda r: [{"claim": "x"}])
    with pytest.raises(TypeError, match="Claim objects"):
        bad.check_claims({})
