"""Stochastic block masks ``m ~ p(m)`` of S²-Guidance (Eq. 2, Alg. 1 ``GenerateStochasticMask``).

A mask is the sorted tuple of block indices to drop. Each draw picks ``k = max(1, round(drop_ratio · L))``
distinct blocks uniformly among the ``L`` blocks minus the excluded ("structurally critical") ones; the
paper drops about 10% of the blocks and never the first one (Fig. 7c,d).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from iclr26_shared.errors import ConfigError

__all__ = ["BlockMaskSampler", "num_dropped"]


def num_dropped(num_blocks: int, drop_ratio: float) -> int:
    """``k = max(1, round(drop_ratio · num_blocks))``: how many blocks one mask drops."""
    return max(1, int(round(drop_ratio * num_blocks)))


class BlockMaskSampler:
    """Draws block masks from a seeded generator of its own (so masks do not disturb the sampler's noise).

    Args:
        drop_ratio: Fraction of blocks dropped per mask, in (0, 1).
        exclude_blocks: Block indices never dropped (default: block 0). Negative indices count from the end.
        seed: Seed of the mask generator; ``None`` seeds it from torch's global RNG.
    """

    def __init__(self, drop_ratio: float = 0.1, exclude_blocks: Iterable[int] = (0,), seed: int | None = None) -> None:
        if isinstance(drop_ratio, bool) or not isinstance(drop_ratio, int | float) or not 0.0 < drop_ratio < 1.0:
            raise ConfigError("drop_ratio", drop_ratio, "a number > 0 and < 1")
        self.drop_ratio = float(drop_ratio)
        self.exclude_blocks = tuple(int(b) for b in exclude_blocks)
        self.generator = torch.Generator()
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the mask stream (``None``: seed from torch's global RNG)."""
        if seed is None:
            seed = int(torch.randint(0, 2**62, (1,)).item())
        self.generator.manual_seed(int(seed))

    def eligible(self, num_blocks: int) -> list[int]:
        """Indices that may be dropped from a stack of ``num_blocks``; raises when there are none."""
        if num_blocks < 1:
            raise ConfigError("num_blocks", num_blocks, "at least 1 block")
        excluded = {b % num_blocks for b in self.exclude_blocks if -num_blocks <= b < num_blocks}
        eligible = [i for i in range(num_blocks) if i not in excluded]
        if not eligible:
            raise ConfigError(
                "exclude_blocks", list(self.exclude_blocks), f"to leave at least one droppable block of {num_blocks}"
            )
        return eligible

    def sample(self, num_blocks: int) -> tuple[int, ...]:
        """One mask: the sorted indices of the dropped blocks."""
        eligible = self.eligible(num_blocks)
        k = min(num_dropped(num_blocks, self.drop_ratio), len(eligible))
        order = torch.randperm(len(eligible), generator=self.generator)[:k]
        return tuple(sorted(eligible[int(i)] for i in order))
