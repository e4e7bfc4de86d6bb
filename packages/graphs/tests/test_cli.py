"""The graphs CLI keeps the domain contract (help, exit codes, entry point, METHODS) and stays light."""

import subprocess
import sys

from iclr26_graphs import cli
from iclr26_shared.testing import check_domain_cli


def test_domain_cli_contract() -> None:
    check_domain_cli(cli.main, cli.METHODS, "graphs")


def test_help_imports_no_torch() -> None:
    code = (
        "import sys, iclr26_graphs, iclr26_graphs.methods.fgl, iclr26_graphs.methods.ogmm, iclr26_graphs.cli as c\n"
        "for m in ('fgl', 'ogmm'):\n"
        "    try:\n        c.main([m, '--help'])\n    except SystemExit:\n        pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'LIGHT')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("LIGHT"), out[-500:]
