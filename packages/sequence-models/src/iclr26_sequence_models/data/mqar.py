r"""Multi-query associative recall (MQAR), as Zoology's ``multiquery_ar`` generates it.

A sequence of length T starts with ``n`` key–value pairs ``k_1 v_1 … k_n v_n`` (keys from
``[1, V/2)``, values from ``[V/2, V)``, distinct within a sequence). The rest holds the ``n`` keys again
as queries, at even offsets ``2·gap`` whose gaps are drawn without replacement with power-law
probability ``p(g) ∝ a·g^{a−1}`` (a = 0.01). The label of a query position (the next-token target
after shifting) is the key's value; every other label is −100. Unused positions get random tokens.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["IGNORE_INDEX", "multiquery_ar"]

IGNORE_INDEX = -100


def multiquery_ar(
    vocab_size: int,
    num_examples: int,
    input_seq_len: int,
    seed: int,
    power_a: float = 0.01,
    num_kv_pairs: int = 8,
    random_non_queries: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generate MQAR data; returns ``(inputs [N, T] int64, labels [N, T] int64)`` (labels −100 off queries).

    Raises ``ValueError`` when the sizes are inconsistent (odd T, ``vocab_size <= T``, ``4n > T``).
    """
    if input_seq_len % 2:
        raise ValueError(f"multiquery_ar: input_seq_len must be even, got {input_seq_len}")
    if vocab_size <= input_seq_len:
        raise ValueError(f"multiquery_ar: vocab_size {vocab_size} must exceed input_seq_len {input_seq_len}")
    if num_kv_pairs * 4 > input_seq_len:
        raise ValueError(f"multiquery_ar: 4 * num_kv_pairs = {4 * num_kv_pairs} exceeds input_seq_len {input_seq_len}")
    if num_kv_pairs < 1 or num_examples < 1:
        raise ValueError("multiquery_ar: num_kv_pairs and num_examples must be >= 1")
    rng = np.random.default_rng(seed)
    n, t = num_examples, input_seq_len
    context = 2 * num_kv_pairs
    half = vocab_size // 2
    keys = np.argsort(rng.random((n, half - 1)), axis=1)[:, :num_kv_pairs] + 1
    values = np.argsort(rng.random((n, vocab_size - half)), axis=1)[:, :num_kv_pairs] + half
    kvs = np.zeros((n, context), dtype=np.int64)
    kvs[:, 0::2], kvs[:, 1::2] = keys, values
    space = (t - context) // 2
    p = power_a * np.arange(1, space + 1, dtype=np.float64) ** (power_a - 1)
    p /= p.sum()
    gaps = np.stack([rng.choice(space, size=num_kv_pairs, replace=False, p=p) for _ in range(n)])
    queries = np.zeros((n, t - context + 1), dtype=np.int64)
    np.put_along_axis(queries, gaps * 2, keys, axis=1)
    examples = np.concatenate([kvs, queries], axis=1)
    labels = np.full((n, t + 1), IGNORE_INDEX, dtype=np.int64)
    np.put_along_axis(labels, gaps * 2 + context + 1, values, axis=1)
    inputs, targets = examples[:, :-1], labels[:, 1:]
    if random_non_queries:
        fill = rng.integers(0, vocab_size, size=inputs.shape)
        inputs = np.where(inputs == 0, fill, inputs)
    return torch.from_numpy(np.ascontiguousarray(inputs)), torch.from_numpy(np.ascontiguousarray(targets))
