"""``--dry-run``: build a preset at its real sizes and take one step, without a run directory.

Every method's ``train`` module defines ::

    def dry_run(cfg: Config, device: torch.device) -> dict[str, Any]:
        '''Build the preset's data (a few items), model and optimizer at cfg's real sizes, run one
        training step and one evaluation step at batch 2, and return at least
        {"parameters": <trainable parameter count>, "train_loss": <the step's loss>}.'''

:func:`dry_run` calls it with the method's seed fixed, times it, measures the peak memory (the process's
peak RSS; on CUDA also ``torch.cuda.max_memory_allocated``), checks the returned numbers and returns one
JSON-able dict. ``iclr26-<domain> <method> --preset full --dry-run`` prints it and exits 0, so a ``full``
preset sized for a GPU is known to build and step before anyone rents the GPU. A preset that cannot be
built raises its :class:`~iclr26_shared.errors.ConfigError`/:class:`~iclr26_shared.errors.DataError` (one
line, exit 2).
"""

from __future__ import annotations

import math
import resource
import sys
import time
from typing import Any

from iclr26_shared.errors import UsageError
from iclr26_shared.spec import LazyFunction, MethodSpec

__all__ = ["dry_run", "format_dry_run"]


def _peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def dry_run(spec: MethodSpec[Any], cfg: Any, device: str = "cpu", *, seed: int = 0) -> dict[str, Any]:
    """Run ``spec``'s ``dry_run(cfg, device)`` once; returns its dict plus ``seconds``, ``peak_rss_bytes``
    (and ``cuda_peak_bytes`` on CUDA), ``method`` and ``device``.

    Raises:
        UsageError: the method defines no ``dry_run`` yet.
        AssertionError: the method's ``dry_run`` returned no positive ``parameters`` or a non-finite
            ``train_loss`` (a bug in the method, not bad input).
    """
    import torch

    from iclr26_shared.device import resolve_device
    from iclr26_shared.seeding import seed_everything

    fn = spec.dry_run
    if fn is None:
        raise UsageError(f"{spec.name}: --dry-run is not available for this method yet")
    if isinstance(fn, LazyFunction):
        try:
            fn = fn.load()
        except AttributeError:
            raise UsageError(f"{spec.name}: --dry-run is not available for this method yet") from None
    dev = resolve_device(device)
    seed_everything(seed)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    t0 = time.perf_counter()
    out = dict(fn(cfg, dev))
    seconds = time.perf_counter() - t0
    params, loss = out.get("parameters"), out.get("train_loss")
    assert isinstance(params, int) and params > 0, (
        f"{spec.name}.dry_run: 'parameters' must be an int > 0, got {params!r}"
    )
    assert isinstance(loss, int | float) and math.isfinite(loss), f"{spec.name}.dry_run: non-finite train_loss {loss!r}"
    out.update(method=spec.name, device=str(dev), seconds=seconds, peak_rss_bytes=_peak_rss_bytes())
    if dev.type == "cuda":
        out["cuda_peak_bytes"] = int(torch.cuda.max_memory_allocated(dev))
    return out


def format_dry_run(out: dict[str, Any]) -> str:
    """One line for the terminal."""
    mem = f"peak RSS {out['peak_rss_bytes'] / 2**30:.2f} GiB"
    if "cuda_peak_bytes" in out:
        mem += f", CUDA peak {out['cuda_peak_bytes'] / 2**30:.2f} GiB"
    return (
        f"dry run of {out['method']} on {out['device']}: {out['parameters']:,} trainable parameters, "
        f"one train + eval step in {out['seconds']:.1f} s (train loss {out['train_loss']:.4g}), {mem}"
    )
