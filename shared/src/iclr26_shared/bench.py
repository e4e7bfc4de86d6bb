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
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from iclr26_shared.io import atomic_write_json

__all__ = ["bench_main", "compare", "measure"]


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
