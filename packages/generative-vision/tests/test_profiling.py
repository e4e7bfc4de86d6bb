"""peak_memory_bytes counts live tensor bytes, freed tensors included only while alive."""

from __future__ import annotations

import torch

from iclr26_generative_vision.profiling import peak_memory_bytes


def test_peak_counts_the_largest_live_set() -> None:
    x = torch.ones(1000)

    def two_at_once() -> None:
        a = x * 2  # 4 kB
        b = x * 3  # 4 kB, both alive
        del a, b

    def one_at_a_time() -> None:
        for k in range(4):
            a = x * k  # each freed before the next
            del a

    assert peak_memory_bytes(two_at_once) >= 8000
    assert 4000 <= peak_memory_bytes(one_at_a_time) < 8000
