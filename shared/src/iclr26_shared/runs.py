"""The run directory (docs/architecture.md §5).

``runs/<method>/<UTC time>-<config hash>/`` holds::

    config.json      resolved config, method, preset, seed, config hash
    env.json         versions, device, seed, git revision, command line
    metrics.jsonl    append-only, one JSON object per logged step
    checkpoints/     step-<9-digit step>.pt, written atomically, the last ``keep_last`` kept
    results.json     what ``run`` returned plus the evaluated claims
    report.md        human-readable report
    figures/*.png
    models/<name>/   final trained models (save_pretrained: safetensors + JSON config; iclr26_model.json)

``RunDir.create(..., resume=True)`` reopens the newest directory of the same method whose config hash
(config + seed) matches, so a killed run continues from its last checkpoint. Checkpoints hold only
tensors and plain Python values and are read with ``torch.load(weights_only=True)``: no arbitrary pickle.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import torch

from iclr26_shared.config import config_to_dict, latest_run_dir, run_hash
from iclr26_shared.device import describe_device
from iclr26_shared.distributed import DistContext
from iclr26_shared.errors import CheckpointError, UsageError
from iclr26_shared.io import atomic_write_bytes, atomic_write_json, atomic_write_text, read_json, utc_stamp
from iclr26_shared.progress import ProgressBar

__all__ = ["RunDir", "load_checkpoint_file"]

_CKPT = re.compile(r"^step-(\d{9})\.pt$")
#: Run directories this process holds the lock of: resolved path -> [descriptor, open RunDirs].
_HELD: dict[str, list[int]] = {}


def _git_revision() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _package_versions() -> dict[str, str]:
    names = ["torch", "numpy"] + sorted(
        d.metadata["Name"] for d in metadata.distributions() if d.metadata["Name"].startswith("iclr26-")
    )
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def load_checkpoint_file(path: str | Path) -> dict[str, Any]:
    """Load one checkpoint with ``weights_only=True``; a truncated or foreign file raises CheckpointError."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint not found: {path}") from None
    except Exception as err:  # torch raises several types for truncated/corrupt/unsafe files
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise CheckpointError(
            f"checkpoint {path} cannot be loaded (truncated, corrupt or holding non-tensor objects): {first}"
        ) from None
    if not isinstance(state, dict) or "step" not in state or "state" not in state:
        raise CheckpointError(f"checkpoint {path} is not an iclr26 checkpoint (expected keys 'step' and 'state')")
    return state


class RunDir:
    """One run's directory; created by :meth:`create` (new or resumed).

    Attributes:
        path: The directory.
        method: Method name.
        config: The resolved config object.
        seed: The run's seed.
        device: The ``torch.device`` the run uses.
        quiet: Log lines instead of progress bars.
        resumed: True when an existing directory was reopened.
        dist: This process's :class:`~iclr26_shared.distributed.DistContext` (world size 1 by default);
            on ranks other than 0 every write is a no-op (figures go to a scratch folder).
    """

    def __init__(
        self,
        path: Path,
        *,
        method: str,
        config: object,
        seed: int,
        device: torch.device,
        quiet: bool = False,
        keep_last: int = 2,
        resumed: bool = False,
        preset: str | None = None,
        dist: DistContext | None = None,
    ) -> None:
        self.path = Path(path)
        self.dist = dist or DistContext()
        self._scratch: Path | None = None
        self.method = method
        self.config = config
        self.seed = seed
        self.device = device
        self.quiet = quiet
        self.keep_last = keep_last
        self.resumed = resumed
        self.preset = preset
        #: The in-memory models this process saved with :meth:`save_model` (name -> model), for tests
        #: that compare them with what :func:`~iclr26_shared.models.load_model` reads back.
        self.saved_models: dict[str, Any] = {}
        self._lock_key: str | None = None
        #: Rows of metrics.jsonl written before this RunDir opened the run: the only ones a resume trims
        #: (rows this process logged, e.g. an earlier stage's, are never dropped by a later load_checkpoint).
        self._inherited = self._count_rows() if self.dist.is_main else 0

    # ---------------------------------------------------------------------------------------------
    # creation and resume
    # ---------------------------------------------------------------------------------------------

    @staticmethod
    def run_hash(config: object, seed: int) -> str:
        """Hash of config and seed: two runs with the same hash compute the same thing."""
        return run_hash(config, seed)

    @classmethod
    def create(
        cls,
        root: str | Path,
        method: str,
        config: object,
        *,
        seed: int = 0,
        device: torch.device | str = "cpu",
        resume: bool = False,
        quiet: bool = False,
        keep_last: int = 2,
        preset: str | None = None,
        dist: DistContext | None = None,
    ) -> RunDir:
        """Make ``root/method/<UTC time>-<hash>/`` or, with ``resume``, reopen the newest matching one.

        Under torchrun rank 0 makes (or finds) the directory and every other rank opens the same one
        without writing to it. ``--resume`` with nothing to resume says so in one line and starts anew.
        """
        if keep_last < 1:
            raise ValueError("keep_last must be >= 1")
        dist = dist or DistContext()
        device = torch.device(device)
        kwargs: dict[str, Any] = dict(
            method=method, config=config, seed=seed, device=device, quiet=quiet, keep_last=keep_last
        )
        if not dist.is_main:
            path, resumed = dist.broadcast((Path(), False))
            return cls(path, resumed=resumed, preset=preset, dist=dist, **kwargs)
        try:
            run = cls._create_main(root, method, config, seed, resume, preset, dist, kwargs)
        except BaseException:
            dist.broadcast((Path(), False))  # do not leave the other ranks waiting
            raise
        dist.broadcast((run.path, run.resumed))
        return run

    @classmethod
    def _create_main(
        cls,
        root: str | Path,
        method: str,
        config: object,
        seed: int,
        resume: bool,
        preset: str | None,
        dist: DistContext,
        kwargs: dict[str, Any],
    ) -> RunDir:
        digest = cls.run_hash(config, seed)
        method_dir = Path(root) / method
        if resume:
            latest = latest_run_dir(method_dir, config, seed)
            if latest is not None:
                run = cls(latest, resumed=True, preset=preset, dist=dist, **kwargs)
                run._lock()  # a second concurrent --resume of this run stops here, in one line
                run._check_saved_config()
                run._remove_stale_temporaries()
                run._write_env()
                return run
            print(
                f"--resume: no earlier {method} run with this config and seed under {method_dir}; starting a new run",
                file=sys.stderr,
            )
        stamp = utc_stamp()
        path = method_dir / f"{stamp}-{digest}"
        n = 1
        while True:  # exclusive: two runs of one config started in the same second get two folders
            try:
                path.mkdir(parents=True)
                break
            except FileExistsError:
                n += 1
                path = method_dir / f"{stamp}-{n}-{digest}"
                if n > 10_000 or not method_dir.is_dir():
                    raise UsageError(f"cannot create the run directory {path}: {method_dir} is not a folder") from None
            except OSError as err:
                raise UsageError(f"cannot create the run directory {path}: {err.strerror or err}") from None
        run = cls(path, resumed=False, preset=preset, dist=dist, **kwargs)
        run._lock()
        atomic_write_json(
            run.path / "config.json",
            {
                "method": method,
                "preset": preset,
                "seed": seed,
                "config_hash": digest,
                "config_class": type(config).__name__,
                "config": config_to_dict(config),
            },
        )
        run._write_env()
        return run

    def _lock(self) -> None:
        """Hold an exclusive ``flock`` on the run directory for as long as this run has it open (released
        by :meth:`close`, or by the OS when the process ends, even by SIGKILL: a lock is never stale).
        Another process that opens the same run (two concurrent ``--resume``) gets a one-line
        :class:`UsageError`; in one process the lock is shared (tests reopen runs in-process)."""
        key = str(self.path.resolve())
        if not self.dist.is_main or key in _HELD:
            if key in _HELD:
                _HELD[key][1] += 1
                self._lock_key = key
            return
        try:
            import fcntl
        except ImportError:  # no flock (Windows): no lock
            return
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise UsageError(
                f"run {self.path} is in use by another process (a concurrent --resume of the same run?); "
                "wait for it to finish, then --resume again"
            ) from None
        _HELD[key] = [fd, 1]
        self._lock_key = key

    def close(self) -> None:
        """Release the run directory's lock (:meth:`_lock`); the runner calls it when the run is written.
        Idempotent."""
        key, self._lock_key = self._lock_key, None
        if key is None or key not in _HELD:
            return
        _HELD[key][1] -= 1
        if _HELD[key][1] <= 0:
            fd = _HELD.pop(key)[0]
            os.close(fd)  # closing the descriptor drops the flock

    def _remove_stale_temporaries(self) -> list[Path]:
        """Delete what a killed writer left behind: atomic writes' ``.<name>.*.tmp`` files (checkpoints,
        JSON) and ``models/.<name>-*`` folders of an unfinished :meth:`save_model`. Safe only under the
        run's lock (no other writer); rank 0 only. Returns what was removed."""
        import shutil

        if not self.dist.is_main:
            return []
        removed = [p for p in self.path.rglob(".*.tmp") if p.is_file()]
        for p in removed:
            p.unlink(missing_ok=True)
        models = self.path / "models"
        if models.is_dir():
            for d in models.iterdir():
                if d.is_dir() and d.name.startswith("."):
                    shutil.rmtree(d, ignore_errors=True)
                    removed.append(d)
        if removed:
            print(f"--resume: removed {len(removed)} unfinished temporary file(s) of a killed write", file=sys.stderr)
        return removed

    def _check_saved_config(self) -> None:
        saved = read_json(self.path / "config.json", what="run config", error=CheckpointError)
        if not isinstance(saved, dict) or "config" not in saved:
            raise CheckpointError(f"run config {self.path / 'config.json'} lacks the 'config' key")
        if saved["config"] != json.loads(json.dumps(config_to_dict(self.config))) or saved.get("seed") != self.seed:
            raise CheckpointError(f"cannot resume {self.path}: its config.json differs from the requested config/seed")

    def _write_env(self) -> None:
        atomic_write_json(
            self.path / "env.json",
            {
                "time_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "python": sys.version.split()[0],
                "platform": platform.platform(),
                "packages": _package_versions(),
                "git_revision": _git_revision(),
                "seed": self.seed,
                "argv": sys.argv,
                "resumed": self.resumed,
                **describe_device(self.device),
            },
        )

    # ---------------------------------------------------------------------------------------------
    # metrics
    # ---------------------------------------------------------------------------------------------

    @property
    def metrics_path(self) -> Path:
        """``metrics.jsonl``."""
        return self.path / "metrics.jsonl"

    def log(self, step: int, **metrics: Any) -> None:
        """Append ``{"step": step, **metrics}`` to metrics.jsonl (one line, flushed to disk; rank 0 only).

        A ``stage=`` metric (a string) names the sub-run the row belongs to: a method whose stages or
        variants reuse step numbers logs each with its own stage and resumes it with
        ``load_checkpoint(stage=...)``, which trims only that stage's rows."""
        from iclr26_shared.io import to_jsonable

        if not self.dist.is_main:
            return
        line = json.dumps(to_jsonable({"step": int(step), **metrics})) + "\n"
        with open(self.metrics_path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def read_metrics(self) -> list[dict[str, Any]]:
        """All logged rows; a cut-off last line (a kill mid-write) is ignored, a corrupt middle line raises."""
        if not self.metrics_path.exists():
            return []
        text = self.metrics_path.read_text(encoding="utf-8")
        lines = text.split("\n")
        rows = []
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                if i == len(lines) - 1:  # the unterminated last line of a killed write
                    break
                raise CheckpointError(f"{self.metrics_path}: line {i + 1} is not valid JSON") from None
        return rows

    def _count_rows(self) -> int:
        try:
            return len(self.read_metrics())
        except (CheckpointError, OSError):
            return 0

    def _trim_metrics(self, last_step: int, stage: str | None = None) -> None:
        """Drop rows an earlier process logged after ``last_step`` (they will be recomputed from the
        checkpoint): of ``stage`` only when given, and never a row this process logged."""
        if not self.dist.is_main or not self.metrics_path.exists():
            return
        rows = self.read_metrics()
        inherited, own = rows[: self._inherited], rows[self._inherited :]

        def dropped(r: Mapping[str, Any]) -> bool:
            return (stage is None or r.get("stage") == stage) and int(r.get("step", -1)) > last_step

        kept = [r for r in inherited if not dropped(r)]
        if len(kept) == len(inherited) and self.metrics_path.read_bytes().endswith(b"\n"):
            return  # nothing to drop (and no cut-off last line to clean)
        self._inherited = len(kept)
        atomic_write_text(self.metrics_path, "".join(json.dumps(r) + "\n" for r in [*kept, *own]))

    # ---------------------------------------------------------------------------------------------
    # checkpoints
    # ---------------------------------------------------------------------------------------------

    @property
    def checkpoint_dir(self) -> Path:
        """``checkpoints/``."""
        return self.path / "checkpoints"

    def checkpoints(self) -> list[tuple[int, Path]]:
        """``(step, path)`` of every checkpoint, oldest first."""
        if not self.checkpoint_dir.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.checkpoint_dir.iterdir() if (m := _CKPT.match(p.name))]
        return sorted(found)

    def save_checkpoint(self, step: int, state: Mapping[str, Any]) -> Path:
        """Write ``{"step": step, "state": state}`` atomically, then keep only the last ``keep_last``.

        ``state`` may hold tensors, numbers, strings, lists, tuples and dicts (model/optimizer
        ``state_dict()``s, :func:`~iclr26_shared.seeding.get_rng_state`), nothing else.
        """
        path = self.checkpoint_dir / f"step-{int(step):09d}.pt"
        if not self.dist.is_main:
            return path
        buf = io.BytesIO()
        torch.save({"step": int(step), "state": dict(state)}, buf)
        atomic_write_bytes(path, buf.getvalue())
        for _, old in self.checkpoints()[: -self.keep_last]:
            old.unlink(missing_ok=True)
        return path

    def restart_stage(self, stage: str) -> None:
        """Drop every ``metrics.jsonl`` row an earlier (killed) process logged with ``stage=stage`` (see
        :meth:`log`): call it when a stage or sub-run starts over from its beginning on resume (it has no
        checkpoint of its own, or its checkpoint is not there yet), so its rows are logged exactly once.
        Rows this process logged are kept."""
        self._trim_metrics(-1, stage)

    def load_checkpoint(self, *, stage: str | None = None, trim: bool = True) -> tuple[int, dict[str, Any]] | None:
        """The latest checkpoint as ``(step, state)``, or None when there is none.

        Metrics an earlier (killed) process logged after that step are dropped from metrics.jsonl so that
        the resumed run appends them again exactly once; with ``stage``, only that stage's rows (see
        :meth:`log`). Rows this process logged are kept: a later stage's call never trims an earlier
        stage's fresh rows. ``trim=False`` drops nothing: for a checkpoint whose step does not count the
        logged steps (e.g. the number of finished sub-runs), whose caller calls :meth:`restart_stage` for
        each sub-run it starts over. A corrupt latest checkpoint falls back to the newest valid older one
        (with a warning on stderr); when none is valid, :class:`CheckpointError` names the newest.
        """
        ckpts = self.checkpoints()
        if not ckpts:
            if trim and self.metrics_path.exists():  # a resumed run with no checkpoint starts over: drop old rows
                self._trim_metrics(-1, stage)
            return None
        first_error: CheckpointError | None = None
        for step, path in reversed(ckpts):  # newest first; a corrupt one falls back to the one before it
            try:
                blob = load_checkpoint_file(path)
                if int(blob["step"]) != step:
                    raise CheckpointError(f"checkpoint {path} says step {blob['step']}, its name says {step}")
            except CheckpointError as err:
                first_error = first_error or err
                continue
            if first_error is not None:
                print(f"warning: {first_error}; resuming from the older checkpoint {path.name}", file=sys.stderr)
            break
        else:
            assert first_error is not None
            raise first_error
        if trim:
            self._trim_metrics(step, stage)
        return step, blob["state"]

    # ---------------------------------------------------------------------------------------------
    # results, report, figures
    # ---------------------------------------------------------------------------------------------

    @property
    def results_path(self) -> Path:
        """``results.json``."""
        return self.path / "results.json"

    def write_results(self, results: Mapping[str, Any]) -> Path:
        """Write results.json atomically (rank 0 only)."""
        if not self.dist.is_main:
            return self.results_path
        return atomic_write_json(self.results_path, dict(results))

    def read_results(self) -> dict[str, Any] | None:
        """results.json of a finished run, or None while it is unfinished."""
        if not self.results_path.exists():
            return None
        data = read_json(self.results_path, what="results", error=CheckpointError)
        if not isinstance(data, dict):
            raise CheckpointError(f"results {self.results_path} must hold a JSON object")
        return data

    def discard_if_unused(self) -> bool:
        """Remove this run's directory when nothing but ``config.json``, ``env.json`` and empty folders was
        written: a bad input found before any work leaves no half-written run behind (nor a directory that
        ``--resume`` would pick). A resumed run, or one with metrics, checkpoints, figures or any other file,
        is kept. Rank 0 only; returns whether the directory was removed."""
        if self.resumed or not self.dist.is_main or not self.path.is_dir():
            return False
        for p in self.path.rglob("*"):
            if p.is_file() and p.parent == self.path and p.name in ("config.json", "env.json"):
                continue
            if p.is_file() or p.is_symlink():
                return False
        import shutil

        shutil.rmtree(self.path)
        return True

    def write_report(self, markdown: str) -> Path:
        """Write report.md atomically (rank 0 only)."""
        if not self.dist.is_main:
            return self.path / "report.md"
        return atomic_write_text(self.path / "report.md", markdown)

    @property
    def figures_dir(self) -> Path:
        """``figures/`` (created on first use; a scratch folder on ranks other than 0)."""
        if not self.dist.is_main:
            if self._scratch is None:
                import tempfile

                self._scratch = Path(tempfile.mkdtemp(prefix=f"iclr26-rank{self.dist.rank}-"))
            return self._scratch
        d = self.path / "figures"
        d.mkdir(exist_ok=True)
        return d

    def figure_path(self, name: str) -> Path:
        """``figures/<name>.png``."""
        return self.figures_dir / (name if name.endswith(".png") else f"{name}.png")

    def save_model(self, name: str, model: Any, *, extra: Mapping[str, Any] | None = None) -> Path:
        """Save a final trained model under ``models/<name>/`` with its own ``save_pretrained`` (rank 0
        only; see :func:`iclr26_shared.models.save_model`); ``iclr26_shared.load_model(run_dir, name)``
        reads it back."""
        from iclr26_shared.models import model_dir, save_model

        self.saved_models[name] = model
        if not self.dist.is_main:
            return model_dir(self.path, name)
        return save_model(self.path, name, model, extra=extra)

    def progress(self, total: int, description: str = "", *, completed: int = 0) -> ProgressBar:
        """A :class:`ProgressBar` that follows this run's ``quiet`` setting."""
        return ProgressBar(total, description or self.method, quiet=self.quiet, completed=completed)
