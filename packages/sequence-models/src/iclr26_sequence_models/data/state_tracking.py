r"""Group word problems (Merrill et al.; the DeltaProduct harness): state tracking by tagging.

Input: ``[BOS] g_1 … g_T`` (token = element index, sampled uniformly; BOS = token ``|G|``, prepended as
the paper's tokenizer does, so the recurrence has an anchor). Target at position t ≥ 1: the running
product ``p_t = g_1 · g_2 ⋯ g_t`` (composition of permutations, applied left to right:
``(a·b)(i) = b(a(i))``). S2 is parity, S3 the smallest non-abelian group, A5 the smallest non-solvable group
and S5 contains it; the latter two are beyond TC⁰-style diagonal recurrences.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["GROUPS", "Group", "make_group", "word_problem"]

GROUPS = ("S2", "S3", "A5", "S5")


@dataclass(frozen=True)
class Group:
    """A finite permutation group: ``elements[i]`` a permutation tuple, ``table[a, b]`` = index of a·b."""

    name: str
    elements: tuple[tuple[int, ...], ...]
    table: np.ndarray

    @property
    def order(self) -> int:
        """Number of elements (= vocabulary size)."""
        return len(self.elements)


def _parity(p: tuple[int, ...]) -> int:
    inv = sum(1 for i in range(len(p)) for j in range(i + 1, len(p)) if p[i] > p[j])
    return inv % 2


def make_group(name: str) -> Group:
    """Build ``S2``, ``S3``, ``A5`` or ``S5``; element 0 is the identity."""
    sizes = {"S2": 2, "S3": 3, "A5": 5, "S5": 5}
    if name not in sizes:
        raise ValueError(f"unknown group {name!r}; expected one of {', '.join(GROUPS)}")
    perms = list(itertools.permutations(range(sizes[name])))
    if name == "A5":
        perms = [p for p in perms if _parity(p) == 0]
    index = {p: i for i, p in enumerate(perms)}
    table = np.array([[index[tuple(b[a[i]] for i in range(len(a)))] for b in perms] for a in perms], dtype=np.int64)
    return Group(name, tuple(perms), table)


def word_problem(
    group: Group, num_examples: int, length: int, seed: int, bos: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(inputs [N, T(+1)], labels [N, T(+1)])``: uniform random elements and their running products.

    With ``bos`` the inputs start with the BOS token ``group.order`` whose label is −100 (ignored).
    """
    if length < 1 or num_examples < 1:
        raise ValueError(f"word_problem: length and num_examples must be >= 1, got {length}, {num_examples}")
    rng = np.random.default_rng(seed)
    x = rng.integers(0, group.order, size=(num_examples, length))
    y = np.empty_like(x)
    acc = x[:, 0].copy()
    y[:, 0] = acc
    for t in range(1, length):
        acc = group.table[acc, x[:, t]]
        y[:, t] = acc
    if bos:
        x = np.concatenate([np.full((num_examples, 1), group.order), x], axis=1)
        y = np.concatenate([np.full((num_examples, 1), -100), y], axis=1)
    return torch.from_numpy(x), torch.from_numpy(y)
