"""`iclr26 list` and every method's `--help` import no torch (they only read configs and specs)."""

import subprocess
import sys

import pytest

from iclr26_shared.umbrella import discover_methods

SPECS, _ = discover_methods()

_PROBE = """
import sys, contextlib, io
from iclr26_shared.umbrella import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main({argv!r})
names = ("torch", "torch_geometric", "e3nn", "diffusers", "flwr", "ray", "mujoco")
heavy = sorted(m for m in names if m in sys.modules)
print(code, ",".join(heavy))
"""


def _probe(argv: list[str]) -> tuple[int, str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)], capture_output=True, text=True, timeout=120, check=True
    )
    code, _, heavy = out.stdout.strip().rpartition("\n")[2].partition(" ")
    return int(code), heavy


def test_iclr26_list_imports_no_torch() -> None:
    assert _probe(["list"]) == (0, "")


@pytest.mark.parametrize("method", sorted(SPECS))
def test_method_help_imports_no_torch(method: str) -> None:
    assert _probe(["run", method, "--help"]) == (0, "")
