"""The rl CLI keeps the domain contract (help, exit codes, entry point, METHODS)."""

from iclr26_rl import cli
from iclr26_shared.testing import check_domain_cli


def test_domain_cli_contract() -> None:
    check_domain_cli(cli.main, cli.METHODS, "rl")
