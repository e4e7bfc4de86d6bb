"""One training run over several processes: ``torchrun`` + ``DistributedDataParallel`` (docs/architecture.md §9).

Every trainer goes through this small layer, so a run moves from a laptop to a multi-GPU node or a
small cluster without a rewrite::

    uv run torchrun --nproc-per-node 2 -m iclr26_sequence_models selective-rope --preset quick

``torchrun`` sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``;
:func:`get_context` reads them once, initialises the process group (gloo on CPU, nccl on CUDA) and
returns a :class:`DistContext`. Without those variables the context has world size 1, no process group
is created and every helper is the identity, so single-process runs are bit-for-bit what they were.

Inside ``run(cfg, run_dir)`` a trainer uses ``run_dir.dist``:

* ``dist.wrap(model)`` — ``DistributedDataParallel`` when world size > 1 (gradients are averaged);
* ``dist.shard(indices)`` — this rank's share of a batch (``indices[rank::world]``) for generated data,
  or ``dist.sampler(dataset)`` — a ``DistributedSampler`` for map-style data sets;
* ``dist.mean(metrics)`` — metrics averaged over ranks before they are logged;
* only rank 0 writes: on other ranks the run directory's ``log``, ``save_checkpoint``, results, report
  and figures are no-ops (figures go to a scratch folder), and ``load_checkpoint`` reads rank 0's files,
  so ``--resume`` works across ranks.

With a global batch ``B`` split into equal shares, DDP's averaged gradient equals the single-process
gradient of the mean loss over ``B``, so the loss curve matches the single process up to float
summation order.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from iclr26_shared.errors import UsageError

if TYPE_CHECKING:
    import torch

__all__ = ["DistContext", "get_context", "launched_by_torchrun", "shutdown"]

T = TypeVar("T")
_CONTEXT: DistContext | None = None


def launched_by_torchrun() -> bool:
    """Whether this process was started by ``torchrun`` (or another launcher setting WORLD_SIZE > 1)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


@dataclass(frozen=True)
class DistContext:
    """This process's place in the run.

    Attributes:
        rank: Global rank (0 writes the run directory).
        world_size: Number of processes.
        local_rank: Rank on this node (selects the GPU).
        backend: ``"gloo"``, ``"nccl"`` or None (single process).
    """

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    backend: str | None = None

    @property
    def is_main(self) -> bool:
        """Rank 0: the process that writes files."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """World size > 1."""
        return self.world_size > 1

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """``DistributedDataParallel(model)`` when distributed, else ``model`` unchanged."""
        if not self.distributed:
            return model
        from torch.nn.parallel import DistributedDataParallel

        param = next(model.parameters(), None)
        on_cuda = param is not None and param.device.type == "cuda"
        return DistributedDataParallel(model, device_ids=[param.device.index] if on_cuda and param else None)

    def shard(self, items: Sequence[T] | torch.Tensor, *, what: str = "batch") -> Any:
        """This rank's equal share ``items[rank::world_size]``; the length must divide evenly (so every
        rank's mean loss has the same weight and the averaged gradient is the global one)."""
        if not self.distributed:
            return items
        n = len(items)
        if n < self.world_size or n % self.world_size:
            raise UsageError(
                f"{what} of {n} cannot be split evenly over {self.world_size} processes "
                f"(torchrun --nproc-per-node must divide it and be at most {n})"
            )
        return items[self.rank :: self.world_size]

    def sampler(self, dataset: Any, *, shuffle: bool = True, seed: int = 0) -> Any:
        """A ``DistributedSampler`` for a map-style data set (None when not distributed)."""
        if not self.distributed:
            return None
        if len(dataset) < self.world_size:
            raise UsageError(f"data set of {len(dataset)} items is smaller than the world size {self.world_size}")
        from torch.utils.data import DistributedSampler

        return DistributedSampler(dataset, num_replicas=self.world_size, rank=self.rank, shuffle=shuffle, seed=seed)

    def mean(self, metrics: Mapping[str, float]) -> dict[str, float]:
        """``metrics`` averaged over ranks (all ranks must call it with the same keys)."""
        if not self.distributed:
            return dict(metrics)
        import torch
        import torch.distributed as dist

        keys = sorted(metrics)
        device = "cuda" if self.backend == "nccl" else "cpu"
        t = torch.tensor([float(metrics[k]) for k in keys], dtype=torch.float64, device=device)
        dist.all_reduce(t)
        return {k: float(v) / self.world_size for k, v in zip(keys, t.tolist(), strict=True)}

    def broadcast(self, obj: T) -> T:
        """Rank 0's ``obj`` on every rank (picklable objects)."""
        if not self.distributed:
            return obj
        import torch.distributed as dist

        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def barrier(self) -> None:
        """Wait for every rank."""
        if self.distributed:
            import torch.distributed as dist

            dist.barrier()


def get_context(device: str = "auto") -> DistContext:
    """The process's :class:`DistContext`; the first call under torchrun creates the process group
    (nccl when ``device`` resolves to CUDA, gloo otherwise) and pins this rank's GPU."""
    global _CONTEXT
    if _CONTEXT is not None:
        return _CONTEXT
    if not launched_by_torchrun():
        _CONTEXT = DistContext()
        return _CONTEXT
    import torch
    import torch.distributed as dist

    try:
        rank = int(os.environ["RANK"])
        world = int(os.environ["WORLD_SIZE"])
        local = int(os.environ.get("LOCAL_RANK", "0"))
    except (KeyError, ValueError) as err:
        raise UsageError(f"torchrun environment is incomplete or malformed: {err}") from None
    use_cuda = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
    backend = "nccl" if use_cuda else "gloo"
    if use_cuda:
        if local >= torch.cuda.device_count():
            raise UsageError(f"LOCAL_RANK {local} has no GPU ({torch.cuda.device_count()} visible)")
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group(backend=backend)
    _CONTEXT = DistContext(rank=rank, world_size=world, local_rank=local, backend=backend)
    return _CONTEXT


def shutdown() -> None:
    """Destroy the process group (end of a torchrun process)."""
    global _CONTEXT
    if _CONTEXT is not None and _CONTEXT.distributed:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
    _CONTEXT = None
