"""Kill-and-resume check (issue 52): a resumed run must equal an uninterrupted one.

:func:`assert_resume_matches` runs a method's preset three times, each in its own process (and process
group), with ``OMP_NUM_THREADS=1``:

1. uninterrupted, into ``<root>/whole``;
2. into ``<root>/killed``, SIGKILLed (the whole process group) right after its ``kill_after``-th checkpoint
   file is in the run folder: the process patches :meth:`RunDir.save_checkpoint
   <iclr26_shared.runs.RunDir.save_checkpoint>` to kill itself once the atomic rename is done, so the
   kill lands at the same point every time (an outside watcher polling the folder could miss a fast run);
3. ``--resume`` on ``<root>/killed``,

(1 and 2 run side by side) and then compares the two finished run folders with :func:`compare_runs`:
``results.json``, every ``metrics.jsonl`` row (in order within each ``stage``; a stage that is recomputed on
resume may come after one that was restored), and every saved model's ``*.safetensors`` (its tensors' bytes
and its header, as JSON: the order of the header's keys is not compared). Left out of the comparison
(:data:`EXCLUDED_KEYS`, :func:`is_excluded_key`): wall clock and host facts, which differ between any two runs:

* the ``machine`` entry of results.json (wall/CPU seconds, CPU count, other processes' share, ``loaded``);
* any key, at any depth, one of whose words (split at ``_ - / . @``) is a timing or host word
  (:data:`TIMING_WORDS`: ``s``, ``ms``, ``us``, ``ns``, ``sec``, ``secs``, ``second``, ``seconds``, ``time``,
  ``times``, ``wall``, ``elapsed``, ``duration``, ``timestamp``, ``host``, ``hostname``, ``pid``), e.g. ``wall_s``,
  ``merge_seconds``, ``seconds_per_graph``, ``updates_per_s``, ``us_per_pair``, ``time_vs_cfg``, ``load_s``;
* the measured values of a timing claim (``"timing": true``): ``ours``, ``baseline``, ``reference``,
  ``gain``, ``verdict`` and ``loaded`` (its text and metric stay compared).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "EXCLUDED_KEYS",
    "TIMING_WORDS",
    "ResumeCheck",
    "assert_resume_matches",
    "compare_runs",
    "is_excluded_key",
    "strip_timing",
]

#: Words of a key name that mark a wall-clock, timing or host value (see the module docstring).
TIMING_WORDS = frozenset(
    {"s", "ms", "us", "ns", "sec", "secs", "second", "seconds", "time", "times", "wall", "elapsed", "duration"}
    | {"timestamp"}
    | {"host", "hostname", "pid"}
)
#: Keys left out whole, wherever they are: the runner's machine record (results.json ``machine``).
EXCLUDED_KEYS = frozenset({"machine"})
#: The measured fields of a claim marked ``timing`` (its verdict depends on the wall clock).
TIMING_CLAIM_FIELDS = frozenset({"ours", "baseline", "reference", "gain", "verdict", "loaded"})

_WORD = re.compile(r"[_\-/.@ ]+")

# The child process: patch save_checkpoint to SIGKILL the process group after the n-th checkpoint (n = 0:
# never), then run the module's command line as `python -m module` would.
_BOOT = """
import os, runpy, signal, sys
kill_after, module = int(sys.argv[1]), sys.argv[2]
sys.argv = [module, *sys.argv[3:]]
if kill_after > 0:
    from iclr26_shared import runs
    original, saved = runs.RunDir.save_checkpoint, []
    def save_checkpoint(self, step, state):
        path = original(self, step, state)
        saved.append(step)
        if len(saved) >= kill_after and self.dist.is_main:
            sys.stdout.flush()
            sys.stderr.write(f"kill-resume check: SIGKILL after checkpoint {path.name}\\n")
            sys.stderr.flush()
            os.killpg(os.getpgrp(), signal.SIGKILL)
        return path
    runs.RunDir.save_checkpoint = save_checkpoint
if module == "iclr26_shared.umbrella":
    from iclr26_shared.umbrella import main
    sys.exit(main(sys.argv[1:]))
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def is_excluded_key(key: str) -> bool:
    """Whether a results/metrics key holds a timing, wall-clock or host value (left out of the comparison)."""
    return key in EXCLUDED_KEYS or any(w in TIMING_WORDS for w in _WORD.split(key.lower()))


def strip_timing(value: Any) -> Any:
    """``value`` without its timing/host entries (:func:`is_excluded_key`) at any depth, and without the
    measured fields of timing claims."""
    if isinstance(value, Mapping):
        timing_claim = value.get("timing") is True and "claim" in value
        return {
            k: strip_timing(v)
            for k, v in value.items()
            if not is_excluded_key(str(k)) and not (timing_claim and k in TIMING_CLAIM_FIELDS)
        }
    if isinstance(value, list | tuple):
        return [strip_timing(v) for v in value]
    return value


def _differences(a: Any, b: Any, where: str, out: list[str], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{where}/{k}: {'only in the uninterrupted run' if k in a else 'only in the resumed run'}")
            else:
                _differences(a[k], b[k], f"{where}/{k}", out, limit)
            if len(out) >= limit:
                return
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} items (rows) uninterrupted vs {len(b)} resumed")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _differences(x, y, f"{where}[{i}]", out, limit)
            if len(out) >= limit:
                return
    elif a != b or type(a) is not type(b):
        out.append(f"{where}: {a!r} uninterrupted vs {b!r} resumed")


def _metrics(run_dir: Path) -> list[Any]:
    path = run_dir / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _safetensors(raw: bytes) -> tuple[Any, bytes]:
    """A safetensors file as (its header as JSON, its data bytes): two files that hold the same tensors
    and metadata compare equal even when their headers list the metadata's keys in another order."""
    n = int.from_bytes(raw[:8], "little")
    try:
        return json.loads(raw[8 : 8 + n]), raw[8 + n :]
    except ValueError:
        return None, raw


def _model_files(run_dir: Path) -> dict[str, tuple[Any, bytes]]:
    models = run_dir / "models"
    if not models.is_dir():
        return {}
    return {str(p.relative_to(models)): _safetensors(p.read_bytes()) for p in sorted(models.rglob("*.safetensors"))}


def _row_differences(a: list[Any], b: list[Any], shown: int = 3) -> list[str]:
    """metrics.jsonl rows that differ: those only in one run (a changed value shows on both sides), or rows
    of one stage (their ``stage`` key; rows without one form a stage) in another order. Rows of different
    stages may interleave differently: a resumed run re-logs a stage it recomputes (one without a
    checkpoint of its own) after the rows a checkpointed stage kept."""
    if a == b:
        return []
    from collections import Counter

    ca, cb = (Counter(json.dumps(r, sort_keys=True) for r in rows) for rows in (a, b))
    only_a, only_b = list((ca - cb).elements()), list((cb - ca).elements())
    out = [
        f"metrics.jsonl: {len(a)} rows uninterrupted vs {len(b)} resumed; {len(only_a)} only in the uninterrupted "
        f"run, {len(only_b)} only in the resumed run"
    ]
    out += [f"  only uninterrupted: {r[:240]}" for r in only_a[:shown]]
    out += [f"  only resumed: {r[:240]}" for r in only_b[:shown]]
    if not only_a and not only_b:
        if all(_by_stage(a)[k] == rows for k, rows in _by_stage(b).items()):
            return []  # each stage's rows in the same order; only the stages interleave differently
        out.append("  the same rows, but a stage's rows in another order")
    return out


def _by_stage(rows: list[Any]) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = {}
    for r in rows:
        groups.setdefault(r.get("stage") if isinstance(r, Mapping) else None, []).append(r)
    return groups


def _drop(tree: Any, path: str) -> None:
    *parents, last = path.strip("/").split("/")
    for key in parents:
        tree = tree.get(key) if isinstance(tree, dict) else None
    if isinstance(tree, dict):
        tree.pop(last, None)


def compare_runs(whole: str | Path, resumed: str | Path, *, ignore: Sequence[str] = (), limit: int = 16) -> list[str]:
    """The differences between two finished run folders, at most ``limit`` lines (empty: they match):
    results.json and metrics.jsonl after :func:`strip_timing`, and the saved models' safetensors (header as
    JSON and data bytes).
    ``ignore``: further results.json entries left out, as ``/``-separated key paths (e.g.
    ``"pool/from_cache"``, a fact about a cache beside the run that a resume finds filled)."""
    whole, resumed = Path(whole), Path(resumed)
    out: list[str] = []
    ra = json.loads((whole / "results.json").read_text(encoding="utf-8"))
    rb = json.loads((resumed / "results.json").read_text(encoding="utf-8"))
    for path in ignore:
        _drop(ra, path)
        _drop(rb, path)
    _differences(strip_timing(ra), strip_timing(rb), "results.json", out, limit)
    out += _row_differences(strip_timing(_metrics(whole)), strip_timing(_metrics(resumed)))
    fa, fb = _model_files(whole), _model_files(resumed)
    for name in sorted(set(fa) | set(fb)):
        if len(out) >= limit:
            break
        if name not in fa or name not in fb:
            out.append(f"models/{name}: {'only in the uninterrupted run' if name in fa else 'only in the resumed run'}")
        elif fa[name] != fb[name]:
            out.append(f"models/{name}: the weights differ")
    return out[:limit]


@dataclass(frozen=True)
class ResumeCheck:
    """What :func:`assert_resume_matches` ran and measured.

    Attributes:
        method: The method.
        whole: The uninterrupted run's folder.
        resumed: The killed-then-resumed run's folder.
        killed_after: Name of the checkpoint after which the second run was killed.
        seconds: Wall seconds of ``"whole"`` and ``"killed"`` (run side by side), ``"resume"`` and ``"total"``.
        differences: What :func:`compare_runs` found (empty when the check passed).
    """

    method: str
    whole: Path
    resumed: Path
    killed_after: str
    seconds: dict[str, float] = field(default_factory=dict)
    differences: list[str] = field(default_factory=list)


def _run_folder(out_dir: Path, method: str) -> Path:
    found = sorted(p for p in (out_dir / method).glob("*") if p.is_dir() and not p.name.startswith("."))
    assert len(found) == 1, f"expected one run folder under {out_dir / method}, found {[p.name for p in found]}"
    return found[0]


def _tail(text: str, n: int = 3000) -> str:
    return text[-n:]


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group this helper created (start_new_session)
    except (ProcessLookupError, PermissionError):
        pass


def assert_resume_matches(
    method: str,
    root: str | Path,
    *,
    args: Sequence[str] = (),
    preset: str = "smoke",
    seed: int = 0,
    kill_after: int = 1,
    module: str = "iclr26_shared.umbrella",
    timeout: float = 900,
    env: Mapping[str, str] | None = None,
    ignore: Sequence[str] = (),
) -> ResumeCheck:
    """Kill a run right after its ``kill_after``-th checkpoint, ``--resume`` it, and assert that it then
    equals an uninterrupted run of the same preset and seed (results.json, metrics.jsonl, saved weights;
    timing and host fields excluded: see the module docstring). Returns the :class:`ResumeCheck`.

    ``method`` runs as ``python -m <module> run <method> --preset <preset> --seed <seed> --device cpu
    --quiet --out-dir DIR *args`` through the ``iclr26`` umbrella by default; a ``module`` other than the
    umbrella gets ``<method> --preset ...`` (a domain CLI, or ``iclr26_shared.testing`` for the toy
    methods). ``ignore`` names further results.json entries to leave out (:func:`compare_runs`); ``env``
    adds environment variables. Fails when the killed run writes no checkpoint (nothing to resume from),
    finishes before the kill, or any run exits non-zero.
    """
    root = Path(root)
    base = ["run", method] if module == "iclr26_shared.umbrella" else [method]
    common = [*base, "--preset", preset, "--seed", str(seed), "--device", "cpu", "--quiet", *args]
    child_env = {**os.environ, **(env or {}), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

    def start(kill: int, out: Path, name: str, *extra: str) -> subprocess.Popen[str]:
        cmd = [sys.executable, "-c", _BOOT, str(kill), module, *common, "--out-dir", str(out), *extra]
        root.mkdir(parents=True, exist_ok=True)
        with open(root / f"{name}.out", "w") as so, open(root / f"{name}.err", "w") as se:  # files: no full pipe
            proc = subprocess.Popen(cmd, stdout=so, stderr=se, text=True, env=child_env, start_new_session=True)
        started.append(proc)
        return proc

    def wait(proc: subprocess.Popen[str], name: str) -> tuple[int, str]:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{method}: the {name} run took more than {timeout:.0f} s") from None
        finally:
            _kill_group(proc)  # whatever it started and left behind
        return proc.returncode, (root / f"{name}.err").read_text(errors="replace")

    whole_dir, killed_dir = root / "whole", root / "killed"
    started: list[subprocess.Popen[str]] = []
    t0 = time.perf_counter()
    try:
        whole, killed = start(0, whole_dir, "whole"), start(kill_after, killed_dir, "killed")
        code, err = wait(killed, "killed")
        t_killed = time.perf_counter() - t0
        assert code != 0, (
            f"{method}: the run finished (exit {code}) before writing checkpoint {kill_after}: nothing to resume from"
        )
        assert code == -signal.SIGKILL, f"{method}: the run to be killed exited {code} on its own:\n{_tail(err)}"
        killed_line = [ln for ln in err.splitlines() if ln.startswith("kill-resume check: SIGKILL after")]
        assert killed_line, f"{method}: killed by something else than the check:\n{_tail(err)}"
        run_b = _run_folder(killed_dir, method)
        assert not (run_b / "results.json").exists(), f"{method}: results.json exists after the kill"
        code, err = wait(whole, "whole")
        t_whole = time.perf_counter() - t0
        assert code == 0, f"{method}: the uninterrupted run exited {code}:\n{_tail(err)}"
        t1 = time.perf_counter()
        code, err = wait(start(0, killed_dir, "resume", "--resume"), "resume")
        t_resume = time.perf_counter() - t1
    finally:
        for proc in started:
            if proc.poll() is None:
                _kill_group(proc)
                proc.wait()
    assert code == 0, f"{method}: the --resume run exited {code}:\n{_tail(err)}"
    assert _run_folder(killed_dir, method) == run_b, f"{method}: --resume did not continue {run_b}"
    env_json = json.loads((run_b / "env.json").read_text(encoding="utf-8"))
    assert env_json.get("resumed") is True, (
        f"{method}: env.json of the resumed run says resumed={env_json.get('resumed')}"
    )
    run_a = _run_folder(whole_dir, method)
    diffs = compare_runs(run_a, run_b, ignore=ignore)
    check = ResumeCheck(
        method,
        run_a,
        run_b,
        killed_line[0].rsplit(" ", 1)[-1],
        {
            "whole": round(t_whole, 2),
            "killed": round(t_killed, 2),
            "resume": round(t_resume, 2),
            "total": round(time.perf_counter() - t0, 2),
        },
        diffs,
    )
    assert not diffs, (
        f"{method}: killed after {check.killed_after} and resumed, the run differs from the uninterrupted one:\n  "
        + "\n  ".join(diffs)
    )
    return check
