r"""The copying task ("Repeat After Me", Jelassi et al. 2024; the paper's ``copying`` harness).

An example is the string ``$ s | s .`` with ``s`` uniform over the first ``vocab`` lowercase letters and
``|s|`` uniform in ``[min_len, max_len]``. Training sequences pack examples into a context of fixed length
(the last one cut off, unmasked); the loss mask covers the answer ``s .`` of each complete example.
Evaluation sequences hold one example padded with ``*``. Masks mark the positions whose *next* token
is predicted (inputs are ``seq[:-1]``, targets ``seq[1:]``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["CopyTokens", "copy_eval_batch", "copy_train_batch"]


@dataclass(frozen=True)
class CopyTokens:
    """Token ids: letters ``0..vocab-1``, then ``$`` (BOS), ``|`` (copy), ``.`` (EOS), ``*`` (pad)."""

    vocab: int = 26

    @property
    def bos(self) -> int:
        """``$``."""
        return self.vocab

    @property
    def sep(self) -> int:
        """``|``."""
        return self.vocab + 1

    @property
    def eos(self) -> int:
        """``.``."""
        return self.vocab + 2

    @property
    def pad(self) -> int:
        """``*``."""
        return self.vocab + 3

    @property
    def size(self) -> int:
        """Vocabulary size of the model."""
        return self.vocab + 4


def _example(tok: CopyTokens, length: int, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    s = rng.integers(0, tok.vocab, size=length).tolist()
    seq = [tok.bos, *s, tok.sep, *s, tok.eos]
    mask = [0] * (length + 2) + [1] * (length + 1)
    return seq, mask


def _shift(seqs: list[list[int]], masks: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    data = torch.tensor(seqs, dtype=torch.int64)
    mask = torch.tensor(masks, dtype=torch.bool)
    return data[:, :-1], data[:, 1:], mask[:, 1:]


def copy_train_batch(
    tok: CopyTokens, batch: int, context: int, min_len: int, max_len: int, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(inputs [B, context], targets [B, context], loss mask [B, context])`` of packed examples."""
    if not 1 <= min_len <= max_len or context <= 2 * max_len + 3:
        raise ValueError(
            f"copy_train_batch: need 1 <= min_len <= max_len and context > 2*max_len+3, got "
            f"{min_len}, {max_len}, {context}"
        )
    seqs, masks = [], []
    for _ in range(batch):
        seq: list[int] = []
        mask: list[int] = []
        while len(seq) < context + 1:
            s, m = _example(tok, int(rng.integers(min_len, max_len + 1)), rng)
            room = context + 1 - len(seq)
            if len(s) > room:
                seq += s[:room]
                mask += [0] * room
            else:
                seq += s
                mask += m
        seqs.append(seq)
        masks.append(mask)
    return _shift(seqs, masks)


def copy_eval_batch(
    tok: CopyTokens, batch: int, length: int, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One example of string length ``length`` per row (no padding needed: all rows have equal length)."""
    seqs, masks = zip(*(_example(tok, length, rng) for _ in range(batch)), strict=True)
    return _shift(list(seqs), list(masks))
