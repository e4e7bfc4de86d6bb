"""Benchmarks as ratios (DESIGN.md §6): time a fast path and its baseline in one process, write JSON.

A benchmark script in ``packages/<domain>/benchmarks/`` looks like::

    from iclr26_shared.bench import bench_main, compare

    def run(quick: bool) -> dict:
        return {"chunk_vs_naive_T512": compare(lambda: chunk(...), lambda: naive(...), repeats=5)}

    if __name__ == "__main__":
        bench_main("gla", run)

and ``iclr26 bench`` runs every such script with ``--out <dir>/<domain>-<name>.json``.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import resource
import statistics
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr26_shared.io import atomic_write_json

__all__ = ["PeakMemory", "bench_main", "compare", "measure", "peak_memory"]


def _sync() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def measure(fn: Callable[[], Any], *, repeats: int = 5, warmup: int = 1) -> dict[str, Any]:
    """Median wall time of ``fn()`` over ``repeats`` calls after ``warmup`` calls (CUDA synchronised)."""
    if repeats < 1 or warmup < 0:
        raise ValueError("repeats must be >= 1 and warmup >= 0")
    for _ in range(warmup):
        fn()
    _sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        _sync()
        times.append(time.perf_counter() - t0)
    return {"median_s": statistics.median(times), "min_s": min(times), "times_s": times, "repeats": repeats}


def _rss_bytes() -> int:
    """Resident set size of this process (``/proc/self/statm``; peak RSS from getrusage elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: the lifetime peak is the best we have
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _release_free_heap() -> None:
    """Return freed heap pages to the OS (glibc ``malloc_trim``) so that the RSS baseline is this call's."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: deltas may be smaller by heap reuse, still comparable
        pass


@dataclass(frozen=True)
class PeakMemory:
    """What :func:`peak_memory` measured.

    Attributes:
        seconds: Wall time of the call (CUDA synchronised).
        cpu_peak_bytes: Peak resident set size during the call minus the RSS before it (sampled every
            ``interval_s``; a spike shorter than that can be missed).
        cuda_peak_bytes: ``torch.cuda.max_memory_allocated`` during the call minus the memory allocated
            before it; None when the device is not CUDA.
        result: What the call returned.
    """

    seconds: float
    cpu_peak_bytes: int
    cuda_peak_bytes: int | None
    result: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form, in MiB (the result is left out)."""
        cuda = None if self.cuda_peak_bytes is None else self.cuda_peak_bytes / 2**20
        return {"seconds": self.seconds, "cpu_peak_mib": self.cpu_peak_bytes / 2**20, "cuda_peak_mib": cuda}


def peak_memory(fn: Callable[[], Any], *, device: str = "cpu", interval_s: float = 0.002) -> PeakMemory:
    """Run ``fn()`` once and measure its extra peak memory: CPU RSS (a sampling thread) and, on a CUDA
    ``device``, the CUDA allocator's peak. The one public helper every benchmark uses for memory."""
    gc.collect()
    _release_free_heap()
    cuda = device.startswith("cuda")
    cuda_base = 0
    if cuda:
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        cuda_base = torch.cuda.memory_allocated()
    base = _rss_bytes()
    peak = [base]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_bytes())
            time.sleep(interval_s)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    t0 = time.perf_counter()
    try:
        result = fn()
        if cuda:
            _sync()
    finally:
        seconds = time.perf_counter() - t0
        done.set()
        thread.join()
    peak[0] = max(peak[0], _rss_bytes())
    cuda_peak = None
    if cuda:
        import torch

        cuda_peak = int(torch.cuda.max_memory_allocated() - cuda_base)
    return PeakMemory(seconds, max(0, peak[0] - base), cuda_peak, result)


def compare(
    fast: Callable[[], Any], baseline: Callable[[], Any], *, repeats: int = 5, warmup: int = 1
) -> dict[str, Any]:
    """Time ``fast`` and ``baseline`` in this process; ``speedup`` = baseline median / fast median."""
    f = measure(fast, repeats=repeats, warmup=warmup)
    b = measure(baseline, repeats=repeats, warmup=warmup)
    return {"fast": f, "baseline": b, "speedup": b["median_s"] / max(f["median_s"], 1e-12)}


def bench_main(name: str, run: Callable[[bool], Mapping[str, Any]], argv: list[str] | None = None) -> int:
    """CLI of a benchmark script: ``--out PATH`` (JSON), ``--quick`` (smaller sizes); prints the JSON."""
    import json
    import platform

    import torch

    parser = argparse.ArgumentParser(prog=name, description=f"benchmark {name}")
    parser.add_argument("--out", type=Path, default=Path("runs") / "bench" / f"{name}.json")
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    args = parser.parse_args(argv)
    results = {
        "benchmark": name,
        "quick": args.quick,
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "platform": platform.platform(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "results": dict(run(args.quick)),
    }
    atomic_write_json(args.out, results)
    print(json.dumps(results["results"], indent=2, default=str))
    print(f"wrote {args.out}")
    return 0
