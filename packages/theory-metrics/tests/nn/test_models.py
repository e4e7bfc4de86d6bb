"""Model shapes: features [B, p = 8w], logits [B, K], forward = classifier(features), any input size."""

from __future__ import annotations

import pytest
import torch

from iclr26_theory_metrics.nn import MODEL_NAMES, build_model


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("shape", [(1, 8, 8), (1, 28, 28), (3, 32, 32)])
def test_shapes_and_feature_map(name: str, shape: tuple[int, int, int]) -> None:
    torch.manual_seed(0)
    model = build_model(name, shape, 7, width=2).eval()
    x = torch.randn(5, *shape)
    h = model.features(x)
    assert h.shape == (5, 16) and model.feature_dim == 16
    assert model.classifier.weight.shape == (7, 16)
    assert torch.allclose(model(x), model.classifier(h))


def test_bias_switch_and_unknown_model() -> None:
    assert build_model("mlp", (1, 8, 8), 3, bias=False).classifier.bias is None
    with pytest.raises(ValueError, match="unknown model 'vit'"):
        build_model("vit", (1, 8, 8), 3)
