"""Every domain's console script answers --help; `iclr26 list` shows every domain; each method's smoke
preset runs end to end from the umbrella CLI and writes a valid run directory."""

import subprocess
import sys
from pathlib import Path

import pytest

from iclr26_shared import umbrella
from iclr26_shared.testing import assert_valid_run_dir, run_cli

DOMAINS = ["sequence-models", "generative-vision", "graphs", "science", "rl", "federated", "theory-metrics", "recsys"]
ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SPECS, LOAD_ERRORS = umbrella.discover_methods()


def test_every_domain_console_script_answers_help() -> None:
    procs = {
        d: subprocess.Popen([BIN / f"iclr26-{d}", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for d in DOMAINS
    }
    for d, p in procs.items():
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"iclr26-{d} --help: {err}"
        assert out.startswith(f"usage: iclr26-{d} <method>")
    res = subprocess.run([sys.executable, "-m", "iclr26_recsys", "--help"], capture_output=True, text=True, check=False)
    assert res.returncode == 0 and res.stdout.startswith("usage: iclr26-recsys")


def test_iclr26_list_shows_every_domain() -> None:
    res = subprocess.run([BIN / "iclr26", "list"], capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    installed = res.stdout.strip().splitlines()[-1]
    assert installed == "domains installed: " + ", ".join(sorted(DOMAINS))
    assert "failed to load" not in res.stderr
    for name, spec in SPECS.items():
        assert name in res.stdout and spec.domain in res.stdout


def test_every_domain_loads() -> None:
    assert LOAD_ERRORS == {}


@pytest.mark.parametrize("method", sorted(SPECS))
def test_method_smoke_run_from_the_cli(method: str, tmp_path: Path) -> None:
    argv = ["run", method, "--preset", "smoke", "--device", "cpu", "--quiet", "--out-dir", str(tmp_path)]
    res = run_cli(umbrella.main, argv)
    assert res.code == 0, res.err[-3000:]
    run_dir = Path(res.out.split("run directory: ")[1].split()[0])
    assert_valid_run_dir(run_dir)


@pytest.mark.parametrize("method", sorted(SPECS))
def test_method_is_documented_in_its_package_readme(method: str) -> None:
    readme = (ROOT / "packages" / SPECS[method].domain / "README.md").read_text()
    assert method in readme, f"packages/{SPECS[method].domain}/README.md has no section for {method}"
    assert method in (ROOT / "README.md").read_text()
