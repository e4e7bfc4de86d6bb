"""Machine-load measurement around a run: wall-time claims of a run that shared the CPUs are not judged."""

import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from iclr26_shared import bench
from iclr26_shared.bench import LOADED_FRACTION, CpuShare, cpu_share
from iclr26_shared.reproduce import _summaries, run_one
from iclr26_shared.runner import CommonFlags, execute
from iclr26_shared.spec import Claim
from iclr26_shared.testing import TOY_SPEC, ToyConfig
from iclr26_shared.verdicts import summarize_claim


def test_foreign_fraction_is_busy_minus_own_over_capacity() -> None:
    share = CpuShare(cpus=2, wall_s=10.0, own_cpu_s=9.0, busy_cpu_s=13.0)
    assert share.foreign_fraction == pytest.approx(0.2) and share.loaded
    assert not CpuShare(cpus=2, wall_s=10.0, own_cpu_s=9.0, busy_cpu_s=9.5).loaded  # 2.5% foreign
    assert CpuShare(cpus=2, wall_s=10.0, own_cpu_s=9.0, busy_cpu_s=8.9).foreign_fraction == 0.0  # tick rounding
    unknown = CpuShare(cpus=2, wall_s=10.0, own_cpu_s=9.0, busy_cpu_s=None)
    assert unknown.foreign_fraction is None and not unknown.loaded
    assert unknown.to_dict()["foreign_cpu_fraction"] is None


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs Linux /proc/stat")
def test_cpu_share_counts_own_work_as_own_and_another_process_as_foreign() -> None:
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 5: pass"
    other = subprocess.Popen([sys.executable, "-c", spin])  # not waited for inside the block: foreign
    try:
        time.sleep(0.3)  # let the interpreter start
        with cpu_share() as share:
            t0 = time.process_time()
            while time.process_time() - t0 < 0.3:  # our own work
                pass
            time.sleep(0.7)
    finally:
        other.kill()
        other.wait()
    assert share.own_cpu_s >= 0.25
    f = share.foreign_fraction
    assert f is not None and 0.0 <= f <= 1.0
    # the spinning process alone used at least a few tenths of a CPU-second during the block's second
    assert f * share.wall_s * share.cpus >= 0.2


def test_a_loaded_timing_claim_is_inconclusive_and_survives_json() -> None:
    c = Claim("fast", "speedup", 2.0, threshold=1.0, timing=True)
    assert c.verdict == "holds"
    loaded = dataclasses.replace(c, loaded=True)
    assert loaded.verdict == "inconclusive"
    assert Claim.from_dict(json.loads(json.dumps(loaded.to_dict()))).loaded
    # only wall-time claims are affected
    assert dataclasses.replace(c, timing=False, loaded=True).verdict == "holds"


def test_seed_summary_of_a_timing_claim_with_a_loaded_seed_is_inconclusive() -> None:
    claims = [Claim("fast", "speedup", v, threshold=1.0, timing=True) for v in (2.0, 2.1, 1.9)]
    assert summarize_claim(claims, [0, 1, 2]).verdict == "holds"
    claims[1] = dataclasses.replace(claims[1], loaded=True)
    s = summarize_claim(claims, [0, 1, 2])
    assert s.verdict == "inconclusive" and "seed 1" in s.note and "shared the CPUs" in s.note


def _with_timing_claim(results: Mapping[str, Any]) -> list[Claim]:
    return [
        *TOY_SPEC.check_claims(results),
        Claim("SGD is fast", "steps", float(results["steps"]), threshold=1.0, timing=True),
    ]


@pytest.mark.parametrize("foreign_cpu_s", [0.0, 1e6])
def test_execute_records_the_machine_and_leaves_loaded_timing_claims_unjudged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, foreign_cpu_s: float
) -> None:
    calls = iter([0.0, foreign_cpu_s])
    own = bench._own_cpu_seconds
    start = own()
    # the machine's busy time = our own CPU + what "others" used (0 or a lot) by the end of the block
    monkeypatch.setattr(bench, "_busy_cpu_seconds", lambda: (own() - start) + next(calls))
    spec = dataclasses.replace(TOY_SPEC, claims=_with_timing_claim)
    run, results, claims = execute(spec, ToyConfig(steps=20), CommonFlags(device="cpu", out_dir=tmp_path, quiet=True))
    machine = json.loads((run.path / "results.json").read_text())["machine"]
    loaded = foreign_cpu_s > 0
    assert machine["loaded"] is loaded and results["machine"] == machine
    assert machine["foreign_cpu_fraction"] == (1.0 if loaded else pytest.approx(0.0, abs=LOADED_FRACTION))
    timing = claims[-1]
    assert timing.loaded is loaded and timing.verdict == ("inconclusive" if loaded else "holds")
    assert not claims[0].loaded  # not a timing claim
    report = (run.path / "report.md").read_text()
    assert ("other processes shared the CPUs: not judged" in report) is loaded


@pytest.mark.parametrize("alone", [True, False])
def test_reproduce_marks_timing_claims_of_runs_scheduled_beside_others_as_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alone: bool
) -> None:
    # an idle machine (no foreign CPU): only the scheduler's knowledge decides
    own = bench._own_cpu_seconds
    start = own()
    monkeypatch.setattr(bench, "_busy_cpu_seconds", lambda: own() - start)
    spec = dataclasses.replace(TOY_SPEC, claims=_with_timing_claim)
    outs = [
        run_one(spec, "smoke", CommonFlags(seed=s, device="cpu", out_dir=tmp_path, quiet=True), alone) for s in (0, 1)
    ]
    assert outs[0].run_dir is not None
    stored = json.loads((Path(outs[0].run_dir) / "results.json").read_text())["claims"][-1]
    assert stored["loaded"] is (not alone)  # stored, so a resumed reproduce reads the mark back
    (timing,) = [s for _, s in _summaries(outs) if s.timing]
    assert timing.verdict == ("holds" if alone else "inconclusive")
