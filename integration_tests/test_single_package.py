"""One domain package installs alone (its own venv, from the lock) and its CLI runs without the others."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def lone_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    assert uv, "uv must be on PATH (the README's set-up installs it)"
    env_dir = tmp_path_factory.mktemp("lone") / "venv"
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(env_dir), "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    res = subprocess.run(
        [uv, "sync", "--package", "iclr26-theory-metrics", "--locked", "--no-dev"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return env_dir


def test_lone_domain_cli_runs(lone_env: Path) -> None:
    res = subprocess.run([lone_env / "bin" / "iclr26-theory-metrics", "--help"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: iclr26-theory-metrics")


def test_umbrella_sees_only_the_installed_domain(lone_env: Path) -> None:
    res = subprocess.run([lone_env / "bin" / "iclr26", "list"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "domains installed: theory-metrics"


def test_other_domains_are_absent(lone_env: Path) -> None:
    mods = ("iclr26_graphs", "iclr26_rl", "torch_geometric")
    code = f"import importlib.util as u; print([m for m in {mods!r} if u.find_spec(m)])"
    res = subprocess.run([lone_env / "bin" / "python", "-c", code], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stderr
