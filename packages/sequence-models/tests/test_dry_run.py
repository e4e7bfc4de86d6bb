"""``--dry-run`` (contract 7): each method builds its preset's data, model and optimizer at the real sizes and
runs one training and one evaluation step at batch 2."""

from __future__ import annotations

import math

import pytest

from iclr26_sequence_models.methods.restrain.spec import SPEC as RESTRAIN
from iclr26_sequence_models.methods.selective_rope.spec import SPEC as SELECTIVE_ROPE
from iclr26_sequence_models.methods.semantic_voting.spec import SPEC as SEMANTIC_VOTING
from iclr26_shared.dryrun import dry_run

SPECS = {"restrain": RESTRAIN, "semantic-voting": SEMANTIC_VOTING, "selective-rope": SELECTIVE_ROPE}
#: Trainable parameters of the Selective RoPE model of the largest task per preset (the LM), and of the tiny
#: policies: hand-checkable from the configs (the quick LM: 2 layers of GLA D 128 + Selective RoPE).
QUICK_PARAMS = {"restrain": 83_264, "semantic-voting": 188_832, "selective-rope": 479_312}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_dry_run_quick(name: str) -> None:
    spec = SPECS[name]
    out = dry_run(spec, spec.preset("quick"), "cpu")
    assert out["parameters"] == QUICK_PARAMS[name]
    if name == "semantic-voting":  # DPO's first step: policy = reference, so the loss is log 2
        assert out["train_loss"] == pytest.approx(math.log(2), abs=1e-5)
    else:
        assert out["train_loss"] > 0.0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SPECS))
def test_dry_run_full(name: str) -> None:
    spec = SPECS[name]
    out = dry_run(spec, spec.preset("full"), "cpu")
    assert out["parameters"] > QUICK_PARAMS[name] and out["train_loss"] > 0.0
