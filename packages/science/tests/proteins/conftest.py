"""Tiny masked LMs shared by the protein tests (random weights, no dropout: deterministic)."""

from __future__ import annotations

import pytest

from iclr26_science.proteins import MaskedLM, bert_from_config, esm2_from_config


@pytest.fixture(params=["bert", "esm2"])
def tiny_lm(request: pytest.FixtureRequest) -> MaskedLM:
    """A 1-layer, width-16 BERT (AntiBERTy vocabulary) or ESM-2 (ESM-1b alphabet)."""
    if request.param == "bert":
        return bert_from_config(layers=1, width=16, heads=2, seed=0)
    return esm2_from_config(layers=1, width=16, heads=2, seed=0)
