"""The package's public API imports, and the CLI imports neither gymnasium nor mujoco."""

from __future__ import annotations

import subprocess
import sys

import iclr26_rl


def test_public_api_names_resolve() -> None:
    for name in iclr26_rl.__all__:
        assert getattr(iclr26_rl, name) is not None, name


def test_cli_import_is_light() -> None:
    code = (
        "import sys, iclr26_rl.cli, iclr26_rl.envs.registry;"
        "print(sorted(m for m in ('gymnasium', 'mujoco') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
