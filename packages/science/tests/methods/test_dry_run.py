"""``--dry-run`` (issue 42 part A): every science method builds its preset's model and optimizer at the real
sizes, takes one training and one evaluation step at batch 2 and reports its parameter count."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from iclr26_science import cli
from iclr26_shared.dryrun import dry_run
from iclr26_shared.testing import run_cli

METHODS = ("cryolvm", "brain-semantoks", "crystal-fourier-transformer", "protein-ttt")


@pytest.mark.parametrize("name", METHODS)
def test_dry_run_on_the_smoke_preset(name: str) -> None:
    spec = cli.METHODS[name]
    out = dry_run(spec, spec.preset("smoke"), "cpu")
    assert isinstance(out["parameters"], int) and out["parameters"] > 0
    assert math.isfinite(out["train_loss"]) and out["peak_rss_bytes"] > 0


def test_dry_run_counts_the_models_real_parameters() -> None:
    """The count is the network's own (an independent count of the same network), not a constant."""
    from iclr26_science.methods.crystal_fourier_transformer.model import build_cft

    spec = cli.METHODS["crystal-fourier-transformer"]
    cfg = spec.preset("smoke")
    want = sum(p.numel() for p in build_cft(cfg, "symmetry").parameters() if p.requires_grad)
    assert dry_run(spec, cfg, "cpu")["parameters"] == want


def test_dry_run_cli_exits_0(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["crystal-fourier-transformer", "--preset", "smoke", "--dry-run", "--device", "cpu",
                             "--out-dir", str(tmp_path)])  # fmt: skip
    assert res.code == 0, res.err
    assert "parameters" in res.out + res.err


@pytest.mark.slow
@pytest.mark.parametrize("name", METHODS)
def test_dry_run_on_the_full_preset(name: str) -> None:
    spec = cli.METHODS[name]
    out = dry_run(spec, spec.preset("full"), "cpu")
    assert out["parameters"] > 0 and math.isfinite(out["train_loss"])
