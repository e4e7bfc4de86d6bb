"""SequenceModel: shapes, every host layer × position, and incremental decoding = full pass."""

from __future__ import annotations

import pytest
import torch

from iclr26_sequence_models.nn import SequenceModel
from iclr26_sequence_models.nn.model import LayerName
from iclr26_shared.testing import assert_close

SEL = {"use_bias": True, "use_gate": True, "conv_act": "silu"}


@pytest.mark.parametrize("layer", ["gla", "gdn", "attn", "fox"])
@pytest.mark.parametrize("position", ["nope", "rope", "selective"])
def test_incremental_decoding_equals_full_pass(layer: LayerName, position: str) -> None:
    torch.manual_seed(0)
    opts = {"use_short_conv": True} if layer == "gla" else None
    model = SequenceModel(40, 32, 2, layer, 4, position, SEL if position == "selective" else None, opts).double()
    ids = torch.randint(0, 40, (2, 23))
    full, _ = model(ids)
    assert full.shape == (2, 23, 40)
    cache, outs = None, []
    for sl in (slice(0, 9), slice(9, 10), slice(10, 11), slice(11, 23)):
        logits, cache = model(ids[:, sl], cache)
        outs.append(logits)
    assert_close(torch.cat(outs, 1), full, rtol=1e-9, atol=1e-10)


def test_position_changes_the_model_and_gradients_flow() -> None:
    torch.manual_seed(0)
    ids = torch.randint(0, 30, (2, 17))
    outs = {}
    for position in ("nope", "rope", "selective"):
        torch.manual_seed(1)
        model = SequenceModel(30, 32, 1, "gla", 2, position, {"use_bias": True} if position == "selective" else None)
        logits, _ = model(ids)
        logits.sum().backward()
        assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
        outs[position] = logits.detach()
    assert not torch.allclose(outs["nope"], outs["rope"])
    assert not torch.allclose(outs["rope"], outs["selective"])


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="unknown layer"):
        SequenceModel(10, 16, 1, "lstm", 2)  # type: ignore[arg-type]
    model = SequenceModel(10, 16, 1, "gla", 2)
    with pytest.raises(ValueError, match="T >= 1"):
        model(torch.zeros(2, 0, dtype=torch.long))
