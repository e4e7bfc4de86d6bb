"""The package's lazy exports (PEP 562, ``iclr26_shared.lazy``): every public name resolves, once."""

import importlib

import pytest


@pytest.mark.parametrize("package", ["iclr26_graphs", "iclr26_graphs.methods.fgl", "iclr26_graphs.methods.ogmm"])
def test_every_public_name_resolves_and_unknown_names_raise(package: str) -> None:
    mod = importlib.import_module(package)
    for name in mod.__all__:
        value = getattr(mod, name)
        source = importlib.import_module(mod._EXPORTS[name])
        assert value is getattr(source, name)
        assert vars(mod)[name] is value  # cached in the package namespace after the first access
    assert set(mod.__all__) <= set(dir(mod)) and set(mod.__all__) == set(mod._EXPORTS)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        getattr(mod, "nope")  # noqa: B009
