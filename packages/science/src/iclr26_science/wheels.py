"""The pinned files this domain reads, listed in ``wheels.toml`` (entry point ``iclr26.wheels``; see
:mod:`iclr26_shared.wheeldata`): fetched by sha256 on first use, never installed or imported."""

from __future__ import annotations

from iclr26_shared.wheeldata import read_pins

__all__ = ["ANTIBERTY", "MDANALYSIS_TESTS", "WHEELS"]

WHEELS = read_pins(__name__.rpartition(".")[0])
(ANTIBERTY, MDANALYSIS_TESTS) = WHEELS
