"""Modular addition a + b mod P as a sequence task, the grokking setup of Power et al. (2022) and Nanda et al.
(2023) that the richness paper (Nam et al., ICLR 2026) uses for its grokking experiment (P = 97).

Every pair (a, b) ∈ [0, P)² is one example, the token sequence ``[a, b, P]`` (token P is "="), labelled
(a + b) mod P; a seeded random ``train_fraction`` of the P² pairs is the training set, the rest the test set.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["ModularData", "modular_addition"]


@dataclass(frozen=True)
class ModularData:
    """Train and test split of modular addition.

    Attributes:
        x_train: ``[N, 3]`` int64 token sequences ``[a, b, P]``.
        y_train: ``[N]`` int64 labels (a + b) mod P.
        x_test: ``[P² − N, 3]`` int64.
        y_test: ``[P² − N]`` int64.
        modulus: P (the number of classes; the vocabulary has P + 1 tokens).
    """

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    modulus: int

    @property
    def vocab_size(self) -> int:
        """P + 1 (the residues and "=")."""
        return self.modulus + 1


def modular_addition(modulus: int = 97, *, train_fraction: float = 0.3, seed: int = 0) -> ModularData:
    """All P² pairs split at random (``seed``) into ``round(train_fraction · P²)`` training examples and the
    rest; raises ``ValueError`` for P < 2 or a fraction that leaves a split empty."""
    if not isinstance(modulus, int) or modulus < 2:
        raise ValueError(f"modulus must be an integer >= 2, got {modulus!r}")
    total = modulus * modulus
    n_train = round(train_fraction * total)
    if not (0.0 < train_fraction < 1.0) or not (0 < n_train < total):
        raise ValueError(f"train_fraction must leave both splits non-empty (0 < fraction < 1), got {train_fraction!r}")
    a = torch.arange(modulus).repeat_interleave(modulus)
    b = torch.arange(modulus).repeat(modulus)
    x = torch.stack([a, b, torch.full_like(a, modulus)], dim=1)
    y = (a + b) % modulus
    order = torch.randperm(total, generator=torch.Generator().manual_seed(seed))
    tr, te = order[:n_train], order[n_train:]
    return ModularData(x[tr], y[tr], x[te], y[te], modulus)
