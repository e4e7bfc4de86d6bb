"""The GPU check of issue 42 part B, prepared on the CPU: one script, run on a machine with CUDA.

    uv run python scripts/gpu_check.py --out "$OUT/gpu_check.json"                 # everything, on cuda
    uv run python scripts/gpu_check.py --stages dryrun --only deql --device cpu     # the CPU twin (a test)

Stages (each method's outcome is recorded, a failure never stops the others; the JSON is rewritten
after every step, so a check cut short keeps what it measured):

* ``smoke``: every method's smoke preset through its CLI with ``--device``; exit code and wall time.
* ``gpu-tests``: the ``-m gpu`` pytest selection.
* ``dryrun``: every method's ``full`` preset dry run (real sizes, one train + one eval step at batch 2)
  on ``--device`` and, with ``--compare-cpu``, on the CPU too: parameter count, time, peak memory, and
  the relative difference of the two train losses (same seed; stated tolerance ``--rtol``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

STAGES = ("smoke", "gpu-tests", "dryrun")


def _write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str))
    os.replace(tmp, path)


def _smoke(name: str, device: str, out_dir: Path, timeout: float) -> dict[str, Any]:
    cmd = [str(Path(sys.executable).parent / "iclr26"), "run", name, "--preset", "smoke", "--device", device]
    cmd += ["--quiet", "--out-dir", str(out_dir)]
    t0 = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"ok": False, "seconds": time.perf_counter() - t0, "error": f"timed out after {timeout:.0f} s"}
    out: dict[str, Any] = {"ok": res.returncode == 0, "rc": res.returncode, "seconds": time.perf_counter() - t0}
    if res.returncode != 0:
        out["error"] = res.stderr[-1500:]
    return out


def _dryrun(spec: Any, device: str, compare_cpu: bool, rtol: float) -> dict[str, Any]:
    from iclr26_shared.dryrun import dry_run

    out: dict[str, Any] = {}
    try:
        main = dry_run(spec, spec.preset("full"), device)
        out.update(ok=True, **{k: main[k] for k in ("parameters", "train_loss", "seconds", "peak_rss_bytes")})
        if "cuda_peak_bytes" in main:
            out["cuda_peak_bytes"] = main["cuda_peak_bytes"]
        if compare_cpu and device != "cpu":
            ref = dry_run(spec, spec.preset("full"), "cpu")
            rel = abs(main["train_loss"] - ref["train_loss"]) / max(abs(ref["train_loss"]), 1e-12)
            out.update(cpu_train_loss=ref["train_loss"], cpu_seconds=ref["seconds"], rel_diff=rel)
            out["matches_cpu"] = bool(math.isfinite(rel) and rel <= rtol)
    except Exception as err:  # recorded, the next method still runs
        out.update(ok=False, error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc(limit=-4))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "gpu_check.json")
    p.add_argument("--device", default="cuda")
    p.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    p.add_argument("--only", nargs="*", default=None, help="method names (default: every installed method)")
    p.add_argument("--compare-cpu", action="store_true", help="dry-run each full preset on the CPU too")
    p.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance of CUDA vs CPU train loss")
    p.add_argument("--smoke-timeout", type=float, default=300.0)
    args = p.parse_args(argv)

    from iclr26_shared.umbrella import discover_methods

    specs, errors = discover_methods()
    names = sorted(specs) if not args.only else args.only
    unknown = [n for n in names if n not in specs]
    if unknown:
        print(f"error: unknown methods {unknown} (installed: {', '.join(sorted(specs))})", file=sys.stderr)
        return 2
    report: dict[str, Any] = {"device": args.device, "stages": args.stages, "load_errors": errors, "methods": {}}
    try:
        import torch

        report["torch"] = torch.__version__
        report["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except Exception as err:
        report["torch_error"] = str(err)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for name in names:
        entry = report["methods"].setdefault(name, {})
        if "smoke" in args.stages:
            entry["smoke"] = _smoke(name, args.device, args.out.parent / "runs", args.smoke_timeout)
            _write(args.out, report)
        if "dryrun" in args.stages:
            entry["dryrun"] = _dryrun(specs[name], args.device, args.compare_cpu, args.rtol)
            _write(args.out, report)
        print(f"[gpu_check] {name}: " + ", ".join(f"{k} {'ok' if v.get('ok') else 'FAILED'}" for k, v in entry.items()))
    if "gpu-tests" in args.stages:
        res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider"],
                             capture_output=True, text=True, check=False)  # fmt: skip
        report["gpu_tests"] = {"rc": res.returncode, "tail": res.stdout[-3000:]}
    report["seconds"] = time.perf_counter() - t0
    _write(args.out, report)
    failed = [n for n, e in report["methods"].items() if any(not v.get("ok") for v in e.values())]
    print(f"[gpu_check] {len(names) - len(failed)}/{len(names)} methods ok; {args.out}")
    return 1 if failed or report.get("gpu_tests", {}).get("rc", 0) not in (0, 5) else 0


if __name__ == "__main__":
    sys.exit(main())
