"""Modular addition (the grokking task): every pair exactly once, correct labels, seeded splits, clear errors."""

from __future__ import annotations

import pytest
import torch

from iclr26_theory_metrics.data import modular_addition


def test_every_pair_once_with_the_right_label() -> None:
    d = modular_addition(11, train_fraction=0.3, seed=0)
    x = torch.cat([d.x_train, d.x_test])
    y = torch.cat([d.y_train, d.y_test])
    assert d.x_train.shape == (36, 3) and d.x_test.shape == (121 - 36, 3) and d.vocab_size == 12
    pairs = {(int(a), int(b)) for a, b, _ in x.tolist()}
    assert len(pairs) == 121 and set(x[:, 2].tolist()) == {11}
    assert torch.equal(y, (x[:, 0] + x[:, 1]) % 11)


def test_seeded_splits() -> None:
    a, b, c = (modular_addition(7, seed=s) for s in (1, 1, 2))
    assert torch.equal(a.x_train, b.x_train) and not torch.equal(a.x_train, c.x_train)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"modulus": 1}, "modulus must be an integer >= 2"),
        ({"modulus": 5, "train_fraction": 1.0}, "train_fraction must leave both splits non-empty"),
        ({"modulus": 5, "train_fraction": 0.01}, "train_fraction must leave both splits non-empty"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        modular_addition(**kwargs)
