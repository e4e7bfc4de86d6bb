"""Install one domain package the way a user does, for every domain and every extra (issue 51).

Every wheel is built into one folder (``uv build --all-packages``); then, per target, a fresh venv outside
the checkout and ``uv pip install --find-links <wheels> --no-build "iclr26-<domain>[extra]"``: ordinary
resolution against the package index (no ``--no-deps``, no export of the lock, no workspace overrides) and
no source build. ``--exclude-newer`` is the newest upload time in ``uv.lock``, so the resolution is the one
a user got on the day the lock was made (reproducible, and what the lock was tested against).

Run as a script it writes the measured matrix (packages, install seconds, venv size) as JSON::

    uv run python integration_tests/install_matrix.py --out docs/install-matrix.json

The tests (``test_wheels.py``) import the same functions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Every domain distribution and its extras ("" = no extra).
TARGETS: dict[str, tuple[str, ...]] = {
    "iclr26-shared": ("", "ray"),
    "iclr26-sequence-models": ("", "llm"),
    "iclr26-generative-vision": ("",),
    "iclr26-graphs": ("",),
    "iclr26-science": ("", "crystals", "cryoem", "fmri", "proteins"),
    "iclr26-rl": ("",),
    "iclr26-federated": ("",),
    "iclr26-theory-metrics": ("",),
    "iclr26-recsys": ("",),
}


def target_name(dist: str, extra: str) -> str:
    return f"{dist}[{extra}]" if extra else dist


def all_targets() -> list[tuple[str, str]]:
    return [(d, e) for d, extras in TARGETS.items() for e in extras]


def clean_env() -> dict[str, str]:
    """The environment of a user's shell: no workspace venv, no CPython download."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH")}
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


def uv() -> str:
    path = shutil.which("uv")
    if path is None:
        raise SystemExit("uv must be on PATH (the README's set-up installs it)")
    return path


def run(cmd: list[str | Path], *, cwd: Path, timeout: float = 1800, env: dict[str, str] | None = None) -> str:
    res = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip
    if res.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} exited {res.returncode}:\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}"
        )
    return res.stdout


def lock_cutoff() -> str:
    """The newest upload time of any file in uv.lock (RFC 3339): the resolution's ``--exclude-newer``."""
    times = re.findall(r'upload-time = "([^"]+)"', (ROOT / "uv.lock").read_text())
    return max(times)


def locked_versions() -> dict[str, set[str]]:
    """Every registry package of uv.lock and its locked versions."""
    data = tomllib.loads((ROOT / "uv.lock").read_text())
    out: dict[str, set[str]] = {}
    for p in data["package"]:
        out.setdefault(p["name"], set()).add(p["version"])
    return out


def build_wheels(dest: Path) -> dict[str, Path]:
    """``uv build --all-packages --wheel`` into ``dest``; the wheels by distribution name."""
    run([uv(), "build", "--all-packages", "--wheel", "--out-dir", dest], cwd=ROOT, timeout=900)
    wheels = {p.name.split("-")[0].replace("_", "-"): p for p in dest.glob("*.whl")}
    missing = set(TARGETS) - set(wheels)
    if missing:
        raise RuntimeError(f"uv build made no wheel for {sorted(missing)}")
    return wheels


@dataclass
class Install:
    """One measured install."""

    target: str
    packages: dict[str, str]
    seconds: float
    venv_bytes: int
    torch_bytes: int
    """Of ``venv_bytes``: torch and the CUDA wheels it pulls (torch, triton, nvidia-*, cuda-*)."""


def _size(path: Path) -> int:
    """Bytes on disk of a folder (hard links counted once per file, as ``du`` does for one folder)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for p in path.rglob("*"):
        try:
            st = p.lstat()
        except OSError:
            continue
        if p.is_file() and not p.is_symlink() and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total


def _torch_size(venv: Path) -> int:
    site = next(venv.glob("lib/python3*/site-packages"))
    parts = [p for p in site.iterdir() if re.match(r"(torch|triton|nvidia|cuda)", p.name.lower())]
    return sum(_size(p) if p.is_dir() else p.stat().st_blocks * 512 for p in parts)


def installed_packages(python: Path) -> dict[str, str]:
    """``{normalised name: version}`` of every distribution in the venv of ``python``."""
    out = run([uv(), "pip", "list", "--python", python, "--format", "json"], cwd=python.parent)
    start = out.index("[")
    return {
        re.sub(r"[-_.]+", "-", p["name"]).lower(): p["version"] for p in json.loads(out[start : out.rindex("]") + 1])
    }


def install(
    dist: str, extra: str, wheels: Path, venv: Path, *, python: str = sys.executable, torch_first: str = ""
) -> Install:
    """A fresh venv at ``venv`` with ``dist[extra]`` from the wheels folder and the index (see module doc);
    ``torch_first``: a torch requirement or wheel file installed before (a CPU build), timed with the rest."""
    if venv.exists():
        shutil.rmtree(venv)
    run([uv(), "venv", "--python", python, venv], cwd=venv.parent)
    py = venv / "bin" / "python"
    t0 = time.monotonic()
    if torch_first:
        run([uv(), "pip", "install", "--python", py, torch_first], cwd=venv.parent)
    run(
        [uv(), "pip", "install", "--python", py, "--find-links", wheels, "--no-build",
         "--exclude-newer", lock_cutoff(), target_name(dist, extra)],
        cwd=venv.parent,
    )  # fmt: skip
    seconds = time.monotonic() - t0
    name = target_name(dist, extra) + (f" (torch first: {Path(torch_first).name})" if torch_first else "")
    return Install(name, installed_packages(py), round(seconds, 1), _size(venv), _torch_size(venv))


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "install-matrix.json")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp folder)")
    ap.add_argument("--only", default="", help="comma-separated targets, e.g. iclr26-graphs,iclr26-science[llm]")
    ap.add_argument("--cpu-torch", default="", help="also install these targets with this torch (a CPU wheel) first")
    ap.add_argument("--cpu-only", default="iclr26-graphs", help="comma-separated targets measured with --cpu-torch")
    args = ap.parse_args()
    import tempfile

    work = args.work or Path(tempfile.mkdtemp(prefix="iclr26-install-"))
    work.mkdir(parents=True, exist_ok=True)
    wheels_dir = work / "wheels"
    build_wheels(wheels_dir)
    only = {s for s in args.only.split(",") if s}
    rows = []
    for dist, extra in all_targets():
        name = target_name(dist, extra)
        if only and name not in only:
            continue
        variants = [""] + ([args.cpu_torch] if args.cpu_torch and name in args.cpu_only.split(",") else [])
        for torch_first in variants:
            res = install(dist, extra, wheels_dir, work / "venv", torch_first=torch_first)
            print(
                f"{res.target:<36} {len(res.packages):4d} packages {res.seconds:7.1f} s {res.venv_bytes / 1e9:6.2f} GB"
                f" (torch + CUDA {res.torch_bytes / 1e9:.2f} GB, torch {res.packages.get('torch')})",
                flush=True,
            )
            rows.append(asdict(res))
    shutil.rmtree(work / "venv", ignore_errors=True)
    meta = {
        "exclude_newer": lock_cutoff(),
        "python": sys.version.split()[0],
        "uv": run([uv(), "--version"], cwd=ROOT).strip(),
    }
    args.out.write_text(json.dumps({"meta": meta, "installs": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
