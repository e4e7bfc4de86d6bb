"""A torchmetrics-like base for the streaming metrics, and input conversion shared by the metric functions.

:class:`StreamingMetric` gives the interface users know from ``torchmetrics.Metric`` without the
dependency: ``update(...)`` adds a batch, ``compute()`` returns the value of everything seen (synchronised
over the processes of a ``torch.distributed`` group when one is initialised), ``reset()`` starts again,
and ``higher_is_better`` says which way is better. Synchronisation all-reduces (sums) the states on a copy,
so the local states stay as they were (as torchmetrics does when it "unsyncs" after ``compute``); each
metric combines its states exactly, also when every process saw a different share of the data, or none.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeAlias

import numpy as np
import torch

__all__ = ["StreamingMetric", "TensorLike", "as_tensor"]

#: What the metric functions take: a torch tensor or a NumPy array.
TensorLike: TypeAlias = torch.Tensor | np.ndarray  # noqa: UP040 (Python 3.11)


def as_tensor(x: object, *, detach: bool = True) -> object:
    """A NumPy array as a torch tensor (sharing memory); a tensor detached (unless ``detach=False``, for a
    differentiable statistic); anything else unchanged (for the caller's type check to name)."""
    if isinstance(x, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(x))
    if isinstance(x, torch.Tensor) and detach:
        return x.detach()
    return x


class StreamingMetric:
    """Base of the streaming metrics: ``update`` / ``compute`` / ``reset``, ``higher_is_better``, DDP sync.

    Args:
        process_group: The ``torch.distributed`` group to synchronise over (default: the whole world).
        dist_sync_on_compute: Synchronise in :meth:`compute` when ``torch.distributed`` is initialised with
            more than one process (default True); :meth:`compute_local` never does.
    """

    #: Which way is better (``None``: a measurement with no better direction).
    higher_is_better: ClassVar[bool | None] = None

    def __init__(self, *, process_group: Any = None, dist_sync_on_compute: bool = True) -> None:
        self.process_group = process_group
        self.dist_sync_on_compute = bool(dist_sync_on_compute)

    def reset(self) -> None:
        """Forget every batch seen."""
        raise NotImplementedError

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Add a batch."""
        raise NotImplementedError

    def compute(self) -> Any:
        """The metric over every batch seen, on every process of the group when ``torch.distributed`` runs."""
        return self._compute(synced=self.world_size() > 1 and self.dist_sync_on_compute)

    def compute_local(self) -> Any:
        """The metric over this process's batches only."""
        return self._compute(synced=False)

    def _compute(self, *, synced: bool) -> Any:
        raise NotImplementedError

    def world_size(self) -> int:
        """Processes in the group (1 when ``torch.distributed`` is not initialised)."""
        dist = torch.distributed
        if not (dist.is_available() and dist.is_initialized()):
            return 1
        return int(dist.get_world_size(self.process_group))

    def _all_reduce(self, tensor: torch.Tensor) -> torch.Tensor:
        """The sum of ``tensor`` over the group, on a copy."""
        out = tensor.clone()
        if self.world_size() > 1:
            torch.distributed.all_reduce(out, op=torch.distributed.ReduceOp.SUM, group=self.process_group)
        return out
