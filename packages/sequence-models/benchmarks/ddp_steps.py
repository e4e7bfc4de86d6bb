"""Steps/s of the selective-rope trainer with 1 vs 2 CPU processes under ``torchrun`` (DDP, gloo).

Both runs train the same global batch (``batch_size`` split over the processes) for the same number of
steps on the copying task with RoPE; the trainer's own ``train_seconds`` (the training loop, periodic
evaluation included) gives steps/s. The ratio ``two / one`` is the speed-up of data parallelism on this
machine: with 2 idle cores it can approach 2 for compute-bound steps, and falls below 1 when the cores are
shared or the model is so small that gloo's all-reduce dominates.

    uv run python packages/sequence-models/benchmarks/ddp_steps.py [--quick] [--out FILE]

Each run is a subprocess with ``OMP_NUM_THREADS=1`` per process, so 1 process uses 1 core and 2 use 2.
Headline numbers are to be measured on an idle machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from iclr26_shared.bench import bench_main


def _train(nproc: int, steps: int, batch: int, hidden: int, out: Path) -> dict[str, Any]:
    args = ["selective-rope", "--preset", "smoke", "--task", "copy", "--no-compare", "--position", "rope"]
    args += ["--device", "cpu", "--quiet", "--copy.steps", str(steps), "--copy.batch-size", str(batch)]
    args += ["--copy.hidden-size", str(hidden), "--copy.eval-every", str(steps), "--out-dir", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if nproc == 1:
        cmd = [sys.executable, "-m", "iclr26_sequence_models", *args]
    else:
        torchrun = shutil.which("torchrun")
        if torchrun is None:
            raise SystemExit("torchrun is not on PATH (it ships with torch: run through `uv run`)")
        cmd = [torchrun, "--standalone", "--nproc-per-node", str(nproc), "-m", "iclr26_sequence_models", *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    (run_dir,) = (out / "selective-rope").iterdir()
    results = json.loads((run_dir / "results.json").read_text())
    r = results["tasks"]["copy"]["runs"]["rope"]
    return {
        "steps": steps,
        "train_seconds": r["train_seconds"],
        "steps_per_s": steps / r["train_seconds"],
        "final_loss": r["curve"][-1]["loss"],
    }


def run(quick: bool) -> dict[str, Any]:
    """1 vs 2 processes on the same global batch; ``quick`` trains a few steps of a small model."""
    steps, batch, hidden = (6, 8, 32) if quick else (100, 32, 128)
    out: dict[str, Any] = {"task": "copy", "position": "rope", "global_batch": batch, "hidden": hidden}
    with tempfile.TemporaryDirectory() as tmp:
        for nproc in (1, 2):
            out[f"nproc{nproc}"] = _train(nproc, steps, batch, hidden, Path(tmp) / f"n{nproc}")
    out["speedup_2_over_1"] = out["nproc2"]["steps_per_s"] / out["nproc1"]["steps_per_s"]
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("sequence-models-ddp-steps", run))
