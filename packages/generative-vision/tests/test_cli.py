"""The generative-vision CLI keeps the domain contract (help, exit codes, entry point, METHODS)."""

from pathlib import Path

import pytest

from iclr26_generative_vision import cli
from iclr26_shared.testing import check_domain_cli, run_cli


def test_domain_cli_contract() -> None:
    check_domain_cli(cli.main, cli.METHODS, "generative-vision")


@pytest.mark.parametrize("method", ["dupa", "s2-guidance"])
def test_an_absent_opt_in_image_set_fails_before_the_run(method: str, tmp_path: Path, monkeypatch) -> None:
    from iclr26_shared import data

    monkeypatch.setenv("ICLR26_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(data, "FASHION_MNIST_DEBIAN", tmp_path / "absent")
    out = tmp_path / "runs"
    res = run_cli(cli.main, [method, "--dataset", "fashion-mnist", "--device", "cpu", "--out-dir", str(out)])
    assert res.code == 2 and res.err.startswith("error: Fashion-MNIST not found"), res.err
    assert len(res.err.strip().splitlines()) == 1 and not out.exists()
