"""MethodSpec validation and Claim round trip."""

import dataclasses
from dataclasses import dataclass
from typing import Any, cast

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


def _spec(**kw: Any) -> MethodSpec[Any]:
    base: dict[str, Any] = dict(name="a-b", domain="d", paper="p", config=ToyConfig, run=lambda c, r: {})
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
    c = Claim("c", "m", 1.0, baseline=0.5, better="lower", margin=0.1, chance=2.0, paper="0.9", timing=True)
    data = c.to_dict()
    assert data["verdict"] == "fails" and Claim.from_dict(data) == c
    nan = Claim("c", "m", float("nan"), threshold=1.0)
    back = Claim.from_dict({**nan.to_dict(), "ours": None})  # results.json writes NaN as null
    assert back.threshold == 1.0 and back.verdict == "inconclusive"
    bad = dataclasses.replace(TOY_SPEC, claims=lambda r: [{"claim": "x"}])
    with pytest.raises(TypeError, match="Claim objects"):
        bad.check_claims({})


def _write_toy_domain(root, calls_file) -> str:
    pkg = root / "iclr26_toy_domain" / "methods" / "ridge"
    pkg.mkdir(parents=True)
    for d in (root / "iclr26_toy_domain", root / "iclr26_toy_domain" / "methods", pkg):
        (d / "__init__.py").write_text("")
    (pkg / "config.py").write_text(
        "from iclr26_shared.testing import ToyConfig\n"
        "PRESETS = {'smoke': ToyConfig(steps=5), 'quick': ToyConfig(), 'full': ToyConfig(steps=900)}\n"
    )
    (pkg / "train.py").write_text(
        f"open({str(calls_file)!r}, 'a').write('train imported\\n')\n"
        "def run(cfg, run_dir):\n    return {'steps': cfg.steps}\n"
    )
    (pkg / "claims.py").write_text(
        "from iclr26_shared.spec import Claim\n"
        "def claims(results):\n    return [Claim('c', 'steps', results['steps'], threshold=1)]\n"
        "def report(results):\n    return 'body'\n"
    )
    return "iclr26_toy_domain.methods.ridge"


def test_from_module_is_lazy_and_picklable(tmp_path, monkeypatch) -> None:
    import pickle
    import sys

    calls = tmp_path / "calls.txt"
    module = _write_toy_domain(tmp_path, calls)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = MethodSpec.from_module(module, name="toy-lazy", paper="p", summary="s")
    assert spec.domain == "toy-domain" and spec.config is ToyConfig and spec.preset("smoke").steps == 5
    assert f"{module}.train" not in sys.modules and not calls.exists()
    assert spec.run(spec.preset("smoke"), cast(Any, None)) == {"steps": 5}
    assert calls.read_text() == "train imported\n"
    assert [c.verdict for c in spec.check_claims({"steps": 5})] == ["holds"] and spec.report({}) == "body"
    again = pickle.loads(pickle.dumps(spec))
    assert again.run(again.preset("quick"), cast(Any, None)) == {"steps": 400}


def test_from_module_errors(tmp_path, monkeypatch) -> None:
    from iclr26_shared.spec import LazyFunction, Resources

    with pytest.raises(ValueError, match="iclr26_<domain>"):
        MethodSpec.from_module("json", name="x", paper="p", summary="s")
    with pytest.raises(AttributeError, match="no function 'nope'"):
        LazyFunction("json", "nope")()
    with pytest.raises(ValueError, match="cpus"):
        Resources(cpus=0)
    assert _spec(gpu_presets=("full",)).needs_gpu("full") and not _spec().needs_gpu("full")
