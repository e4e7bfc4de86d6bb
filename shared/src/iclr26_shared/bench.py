"""Benchmarks as ratios (docs/architecture.md §8): time a fast path and its baseline in one process, write JSON.

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
import contextlib
import ctypes
import functools
import gc
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr26_shared.io import atomic_write_json

__all__ = ["LOADED_FRACTION", "CpuShare", "PeakMemory", "bench_main", "compare", "cpu_share", "measure", "peak_memory"]


@functools.cache
def _torch_timer() -> Callable[[], float]:
    from torch.utils.benchmark.utils.timer import timer

    return timer


def _clock() -> float:
    """torch.utils.benchmark's timer: waits for queued accelerator (CUDA, MPS, ...) work, then reads
    ``timeit.default_timer`` (imported once, not inside every timed interval)."""
    return _torch_timer()()


def measure(fn: Callable[[], Any], *, repeats: int = 5, warmup: int = 1) -> dict[str, Any]:
    """Median wall time of ``fn()`` over ``repeats`` calls after ``warmup`` calls.

    Each call is timed on its own with torch.utils.benchmark's timer (:func:`_clock`: queued CUDA work is
    waited for before the clock is read), at the caller's torch thread count. ``Timer.timeit`` itself is
    not used: it adds two warm-up calls to every measurement and keeps only the mean, while a benchmark
    here wants each call's time (``times_s``) for its median and spread, at one call per repeat."""
    if repeats < 1 or warmup < 0:
        raise ValueError("repeats must be >= 1 and warmup >= 0")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = _clock()
        fn()
        times.append(_clock() - t0)
    return {"median_s": statistics.median(times), "min_s": min(times), "times_s": times, "repeats": repeats}


LOADED_FRACTION = 0.10
"""A run is *loaded* when processes other than itself used more than this fraction of the machine's CPU
capacity (all cores × wall time) while it ran; its wall-time claims are then not judged."""


def _busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine spent busy since boot (psutil: user + nice + system + irq + softirq +
    steal, all CPUs); None where psutil cannot tell."""
    import psutil

    try:
        t = psutil.cpu_times()
    except (OSError, RuntimeError):
        return None
    return sum(float(getattr(t, name, 0.0)) for name in ("user", "nice", "system", "irq", "softirq", "steal"))


def _own_cpu_seconds() -> float:
    """CPU seconds of this process (all threads) and of its waited-for children (psutil)."""
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system + t.children_user + t.children_system


@dataclass
class CpuShare:
    """Who used the machine's CPUs while a block ran (filled in by :func:`cpu_share` when the block ends).

    ``foreign_fraction = max(0, busy − own) / (wall · cpus)``: the share of the machine's CPU capacity used
    by *other* processes (other runs, tests, anyone's jobs; niced ones count too). None when unknown (no
    psutil) or before the block ended. Clock-tick rounding (10 ms per core) makes very short
    blocks noisy; wall-time claims run for seconds.

    Attributes:
        cpus: Logical CPUs of the machine (psutil's machine-wide times count all of them).
        wall_s: Wall time of the block.
        own_cpu_s: CPU seconds of this process and its waited-for children during the block.
        busy_cpu_s: CPU seconds the whole machine was busy during the block (None: unknown).
    """

    cpus: int = 0
    wall_s: float = 0.0
    own_cpu_s: float = 0.0
    busy_cpu_s: float | None = None

    @property
    def foreign_fraction(self) -> float | None:
        """Share of the machine's CPU capacity used by other processes during the block (0–1), or None."""
        if self.busy_cpu_s is None or self.wall_s <= 0 or self.cpus <= 0:
            return None
        return min(1.0, max(0.0, self.busy_cpu_s - self.own_cpu_s) / (self.wall_s * self.cpus))

    @property
    def loaded(self) -> bool:
        """Whether other processes used more than :data:`LOADED_FRACTION` of the CPUs (False when unknown)."""
        f = self.foreign_fraction
        return f is not None and f > LOADED_FRACTION

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``results.json``'s ``machine``)."""
        f = self.foreign_fraction
        return {
            "cpus": self.cpus,
            "wall_s": round(self.wall_s, 3),
            "own_cpu_s": round(self.own_cpu_s, 3),
            "foreign_cpu_fraction": None if f is None else round(f, 4),
            "loaded": self.loaded,
        }


@contextlib.contextmanager
def cpu_share() -> Iterator[CpuShare]:
    """Measure, around a block, how much of the machine other processes used (see :class:`CpuShare`)::

    with cpu_share() as share:
        run()
    if share.loaded: ...  # a wall-time measurement of run() is not trustworthy
    """
    share = CpuShare(cpus=os.cpu_count() or 1)
    busy0, own0, t0 = _busy_cpu_seconds(), _own_cpu_seconds(), time.monotonic()
    try:
        yield share
    finally:
        busy1 = _busy_cpu_seconds()
        share.wall_s = time.monotonic() - t0
        share.own_cpu_s = _own_cpu_seconds() - own0
        share.busy_cpu_s = None if busy0 is None or busy1 is None else busy1 - busy0


def _rss_bytes() -> int:
    """Resident set size of this process now (psutil)."""
    import psutil

    return int(psutil.Process().memory_info().rss)


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
            _clock()  # waits for the queued CUDA work
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
    """CLI of a benchmark script: ``--out PATH`` (JSON), ``--quick`` (smaller sizes); prints the JSON. The JSON
    records under ``machine`` how much of the CPUs other processes used meanwhile (:func:`cpu_share`)."""
    import json
    import platform

    import torch

    parser = argparse.ArgumentParser(prog=name, description=f"benchmark {name}")
    parser.add_argument("--out", type=Path, default=Path("runs") / "bench" / f"{name}.json")
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    args = parser.parse_args(argv)
    with cpu_share() as share:
        measured = dict(run(args.quick))
    results = {
        "benchmark": name,
        "quick": args.quick,
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "platform": platform.platform(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        # whether other processes shared the CPUs while it ran (timings then are not an idle machine's)
        "machine": share.to_dict(),
        "results": measured,
    }
    atomic_write_json(args.out, results)
    print(json.dumps(results["results"], indent=2, default=str))
    print(f"wrote {args.out}")
    return 0
