"""``iclr26_shared.lazy.lazy_exports``: names resolve on first access, are cached, unknown names raise."""

import sys
import types

import pytest

from iclr26_shared.lazy import lazy_exports


def test_lazy_exports_resolve_cache_list_and_reject(monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = types.ModuleType("fake_pkg")
    monkeypatch.setitem(sys.modules, "fake_pkg", pkg)
    exports = {"dumps": "json", "sqrt": "math"}
    getattr_, dir_ = lazy_exports("fake_pkg", exports, ["dumps", "sqrt"])
    import json
    import math

    assert "dumps" not in vars(pkg)
    assert getattr_("dumps") is json.dumps and getattr_("sqrt") is math.sqrt
    assert vars(pkg)["dumps"] is json.dumps  # cached in the package namespace
    assert {"dumps", "sqrt"} <= set(dir_())
    with pytest.raises(AttributeError, match="module 'fake_pkg' has no attribute 'nope'"):
        getattr_("nope")
