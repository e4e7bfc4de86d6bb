"""One domain installed from built wheels, as a user outside the checkout gets it (issue 34 §7):
``uv build --all-packages``, then ``iclr26-shared`` + ``iclr26-graphs`` from their wheels into a clean venv
(third-party versions pinned to uv.lock), and the graphs smoke run from a folder outside the checkout.
Nothing may be read from the checkout: not the shared package (a workspace install would be editable),
not package data."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _uv() -> str:
    uv = shutil.which("uv")
    assert uv, "uv must be on PATH (the README's set-up installs it)"
    return uv


def _run(cmd: list[str | Path], *, cwd: Path, env: dict[str, str] | None = None, timeout: int = 900) -> str:
    res = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert res.returncode == 0, f"{cmd} exited {res.returncode}:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    return res.stdout


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    uv, tmp = _uv(), tmp_path_factory.mktemp("wheels")
    dist, venv = tmp / "dist", tmp / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    env["UV_PYTHON_DOWNLOADS"] = "never"
    _run([uv, "build", "--all-packages", "--wheel", "--out-dir", dist], cwd=ROOT, env=env)
    wheels = {p.name.split("-")[0]: p for p in dist.glob("*.whl")}
    assert {"iclr26_shared", "iclr26_graphs"} <= set(wheels), sorted(wheels)
    reqs = tmp / "requirements.txt"
    _run(
        [uv, "export", "--package", "iclr26-graphs", "--no-emit-workspace", "--no-hashes", "--no-dev",
         "--locked", "--output-file", reqs],
        cwd=ROOT, env=env,
    )  # fmt: skip
    _run([uv, "venv", "--python", sys.executable, venv], cwd=tmp, env=env)
    py = venv / "bin" / "python"
    # the export is the lock's full resolution, so --no-deps installs exactly it (data-only wheels with
    # stale pins, e.g. graspologic's numpy<2, are overridden in the root pyproject's dependency-metadata)
    install = [uv, "pip", "install", "--no-deps", "--python", py, "-r", reqs]
    _run([*install, wheels["iclr26_shared"], wheels["iclr26_graphs"]], cwd=tmp, env=env)
    return venv, tmp


def test_shared_and_graphs_come_from_the_wheels(wheel_env: tuple[Path, Path]) -> None:
    venv, tmp = wheel_env
    code = (
        "import json, iclr26_shared, iclr26_graphs; print(json.dumps([iclr26_shared.__file__, iclr26_graphs.__file__]))"
    )
    files = json.loads(_run([venv / "bin" / "python", "-c", code], cwd=tmp).strip().splitlines()[-1])
    for f in files:
        assert Path(f).resolve().is_relative_to(venv.resolve()), f"{f} is not inside the venv (an editable install?)"
    direct = list((venv / "lib").glob("python3*/site-packages/*.pth"))
    assert not any(str(ROOT) in p.read_text() for p in direct), "a .pth file points into the checkout"


def test_graphs_smoke_run_from_the_wheels(wheel_env: tuple[Path, Path]) -> None:
    venv, tmp = wheel_env
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    argv = ["fgl", "--preset", "smoke", "--device", "cpu", "--quiet", "--out-dir", tmp / "runs"]
    out = _run([venv / "bin" / "iclr26-graphs", *argv], cwd=tmp, env=env)
    assert "run directory:" in out
    (run_dir,) = (tmp / "runs" / "fgl").iterdir()
    results = json.loads((run_dir / "results.json").read_text())
    assert results["claims"] and (run_dir / "report.md").is_file()
    listing = _run([venv / "bin" / "iclr26", "list"], cwd=tmp, env=env)
    assert listing.strip().splitlines()[-1] == "domains installed: graphs"
