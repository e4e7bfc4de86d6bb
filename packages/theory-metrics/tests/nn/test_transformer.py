"""The grokking transformer: shapes, features → classifier = forward, and it fits a small modular-addition set."""

from __future__ import annotations

import pytest
import torch

from iclr26_theory_metrics import richness
from iclr26_theory_metrics.data import modular_addition
from iclr26_theory_metrics.nn import ModularTransformer


def test_shapes_and_feature_map() -> None:
    torch.manual_seed(0)
    model = ModularTransformer(12, 11, dim=16, heads=2, mlp_dim=32, layers=2)
    tokens = torch.randint(0, 12, (5, 3))
    h = model.features(tokens)
    assert h.shape == (5, 16) and model.feature_dim == 16
    assert torch.allclose(model(tokens), model.classifier(h))
    with pytest.raises(ValueError, match="divisible by heads"):
        ModularTransformer(12, 11, dim=10, heads=4)


def test_memorises_a_small_training_set_and_lowers_richness() -> None:
    """Full-batch AdamW on P = 7 (39 training pairs): 100 % training accuracy within 300 steps, and D_LR of the
    training features against the outputs falls from its value at initialisation."""
    torch.manual_seed(0)
    d = modular_addition(7, train_fraction=0.8, seed=0)
    model = ModularTransformer(d.vocab_size, 7, dim=32, heads=2, mlp_dim=64, layers=2)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)

    def d_lr() -> float:
        with torch.no_grad():
            h = model.features(d.x_train)
            return richness(h, model.classifier(h))

    before = d_lr()
    for _ in range(300):
        loss = torch.nn.functional.cross_entropy(model(d.x_train), d.y_train)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = float((model(d.x_train).argmax(1) == d.y_train).double().mean())
    assert acc == 1.0
    assert d_lr() < before
