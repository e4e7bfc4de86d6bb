"""The package's public API resolves to the right objects, and the CLI imports neither torch nor gymnasium."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import iclr26_rl


@pytest.mark.parametrize("name", iclr26_rl.__all__)
def test_public_api_name_is_the_defining_modules_object(name: str) -> None:
    value = getattr(iclr26_rl, name)
    module = importlib.import_module(iclr26_rl._WHERE[name])  # pyright: ignore[reportPrivateUsage] - the table under test
    assert value is getattr(module, name)
    if isinstance(value, type) or (callable(value) and hasattr(value, "__qualname__")):
        assert value.__qualname__ == name  # classes and functions are exported under their own name


def test_public_api_kinds() -> None:
    from iclr26_rl.methods.ego_foresight.config import EgoForesightConfig
    from iclr26_shared.spec import MethodSpec

    assert isinstance(iclr26_rl.SPEC, MethodSpec) and iclr26_rl.SPEC.name == "ego-foresight"
    assert iclr26_rl.SPEC.config is EgoForesightConfig and set(iclr26_rl.PRESETS) == {"smoke", "quick", "full"}
    assert iclr26_rl.mean_ci.__module__ == "iclr26_rl.methods.ego_foresight.metrics"


def test_unknown_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = iclr26_rl.nope  # pyright: ignore[reportAttributeAccessIssue] - the missing name under test


@pytest.mark.parametrize(
    "code",
    [
        "import iclr26_rl",
        "import iclr26_rl.cli as c; c.main(['ego-foresight', '--help'])",
        "import iclr26_rl.methods.ego_foresight as m; m.SPEC, m.PRESETS",
    ],
)
def test_light_imports(code: str) -> None:
    heavy = "('torch', 'gymnasium', 'mujoco', 'numpy')"
    probe = f"{code}\nimport sys; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
