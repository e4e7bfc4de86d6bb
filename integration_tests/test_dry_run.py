"""Every method's ``full`` preset builds at its real sizes and takes one training and one evaluation step on
the CPU (``--dry-run``; issue 42 part A). Slow: ``uv run pytest -m slow integration_tests/test_dry_run.py``.
The quick presets' dry runs are tested in each package's own tests (default suite)."""

from __future__ import annotations

import pytest

from iclr26_shared.dryrun import dry_run, format_dry_run
from iclr26_shared.errors import DataError
from iclr26_shared.umbrella import discover_methods

SPECS, _ = discover_methods()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SPECS))
def test_full_preset_builds_and_steps_on_the_cpu(name: str) -> None:
    spec = SPECS[name]
    try:
        out = dry_run(spec, spec.preset("full"), "cpu")
    except DataError as err:  # an opt-in data set the full preset reads is not on this machine
        pytest.skip(f"{name}: {err}")
    print(format_dry_run(out))
    assert out["parameters"] > 0 and out["peak_rss_bytes"] > 0
