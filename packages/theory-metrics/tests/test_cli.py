"""The theory-metrics CLI keeps the domain contract (help, exit codes, entry point, METHODS)."""

from iclr26_shared.testing import check_domain_cli
from iclr26_theory_metrics import cli


def test_domain_cli_contract() -> None:
    check_domain_cli(cli.main, cli.METHODS, "theory-metrics")
