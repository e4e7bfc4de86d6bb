"""The theory-metrics CLI keeps the domain contract (help, exit codes, entry point, METHODS) and stays light."""

from __future__ import annotations

import subprocess
import sys

from iclr26_shared.testing import check_domain_cli
from iclr26_theory_metrics import cli


def test_domain_cli_contract() -> None:
    check_domain_cli(cli.main, cli.METHODS, "theory-metrics")


def test_help_imports_no_torch() -> None:
    code = (
        "import sys, contextlib, io, iclr26_theory_metrics, iclr26_theory_metrics.cli as c\n"
        "import iclr26_theory_metrics.methods.neural_collapse as m, iclr26_theory_metrics.methods.richness as r\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        c.main(['neural-collapse', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    try:\n"
        "        c.main(['richness', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "assert m.SPEC.name == 'neural-collapse' and r.SPEC.name == 'richness'\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_every_public_name_resolves() -> None:
    import iclr26_theory_metrics as pkg

    missing = [name for name in pkg.__all__ if not hasattr(pkg, name)]
    assert missing == []
