"""Wall time of ``iclr26 reproduce --preset smoke --seeds 2``: local process pool vs the Ray backend.

Both run every installed method's smoke preset for two seeds with two workers on this machine, one after
the other in this process (run it alone: other load on the cores distorts the ratio). Ray's start-up
(``ray.init`` of a local cluster) is measured separately and reported; the Ray wall time includes it.
Writes JSON (``--out``); ``--quick`` uses the two toy test methods instead of the installed ones.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from iclr26_shared.bench import bench_main
from iclr26_shared.reproduce import reproduce


def _specs(quick: bool) -> dict[str, Any]:
    if quick:
        from iclr26_shared.testing import TOY_SPEC

        smoke = dataclasses.replace(TOY_SPEC, presets={**TOY_SPEC.presets, "quick": TOY_SPEC.presets["smoke"]})
        return {"toy-ridge": smoke, "toy-two": dataclasses.replace(smoke, name="toy-two")}
    from iclr26_shared.umbrella import discover_methods

    specs, errors = discover_methods()
    if errors:
        raise SystemExit(f"domains failed to load: {errors}")
    return specs


def run(quick: bool) -> dict[str, Any]:
    specs = _specs(quick)
    preset = "quick" if quick else "smoke"
    out: dict[str, Any] = {"methods": sorted(specs), "seeds": 2, "preset": preset, "workers": 2}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        _, pool = reproduce(specs, preset=preset, seeds=2, jobs=2, device="cpu", out_dir=Path(tmp) / "pool")
        out["process_pool_s"] = time.perf_counter() - t0
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
        out["ray_startup_s"] = time.perf_counter() - t0
        ray.shutdown()
        t0 = time.perf_counter()
        _, on_ray = reproduce(specs, preset=preset, seeds=2, backend="ray", device="cpu", out_dir=Path(tmp) / "ray")
        out["ray_s"] = time.perf_counter() - t0
    out["runs_ok"] = {"process": sum(o.ok for o in pool), "ray": sum(o.ok for o in on_ray), "total": len(pool)}
    out["ray_over_pool"] = out["ray_s"] / out["process_pool_s"]
    return out


if __name__ == "__main__":
    bench_main("reproduce_backends", run)
