"""Every domain, and every extra, installed from the built wheels the way a user installs it (issue 51).

``uv build --all-packages``, then per target a fresh venv outside the checkout and ``uv pip install
--find-links <wheels> --no-build "iclr26-<domain>[extra]"``: ordinary resolution against the package index (no
``--no-deps``, no export of the lock, no workspace overrides; ``--exclude-newer`` = the lock's newest upload,
see :mod:`install_matrix`) and no source build. Checked per target: it resolves; numpy and torch are at the
lock's major versions; every installed distribution is on the reviewed allow-list
(``install_allowlist.toml``); the iclr26 packages come from the wheels; from a folder outside the checkout
every module of the domain imports (a module of an extra that is not installed gives the one-line
``MissingExtraError`` naming it, nothing else) and every method's ``--help`` exits 0. The federated smoke run
(default engine) runs from its venv in the default suite; every method's smoke run from the venvs is ``slow``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import install_matrix as im  # noqa: E402

ROOT = im.ROOT
ALLOW = tomllib.loads((Path(__file__).resolve().parent / "install_allowlist.toml").read_text())
TARGETS = [im.target_name(d, e) for d, e in im.all_targets()]
#: The domain distributions' import names.
MODULES = {d: d.replace("-", "_") for d in im.TARGETS}

#: Imports every module of ``sys.argv[1]`` and runs every method's ``--help`` through the domain's CLI; prints
#: JSON {"modules": n, "errors": {module: "Type: message"}, "help": {method: exit code}}.
PROBE = r"""
import contextlib, importlib, io, json, pkgutil, sys
pkg = sys.argv[1]
root = importlib.import_module(pkg)
errors, count = {}, 1
for info in pkgutil.walk_packages(root.__path__, pkg + "."):
    count += 1
    try:
        importlib.import_module(info.name)
    except Exception as err:
        errors[info.name] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
helps = {}
if pkg != "iclr26_shared":
    cli = importlib.import_module(pkg + ".cli")
    for name in dict(cli.METHODS):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                code = cli.main([name, "--help"])
            except SystemExit as exc:
                code = exc.code
        helps[name] = [code, out.getvalue()[:80]]
print(json.dumps({"modules": count, "errors": errors, "help": helps}))
"""


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("wheels")
    im.build_wheels(dest)
    return dest


def _dist_of(target: str) -> tuple[str, str]:
    dist, _, extra = target.partition("[")
    return dist, extra.rstrip("]")


def _install(wheels: Path, tmp: Path, target: str) -> tuple[Path, im.Install]:
    dist, extra = _dist_of(target)
    venv = tmp / "venv"
    return venv, im.install(dist, extra, wheels, venv)


def _major(version: str) -> str:
    return version.split(".")[0]


@pytest.mark.parametrize("target", TARGETS)
def test_one_domain_installs_alone_with_ordinary_resolution(wheels: Path, tmp_path: Path, target: str) -> None:
    venv, res = _install(wheels, tmp_path, target)
    pkgs = res.packages
    locked = im.locked_versions()
    for name in ("numpy", "torch"):
        assert name in pkgs, f"{target}: {name} not installed"
        majors = {_major(v) for v in locked[name]}
        assert _major(pkgs[name]) in majors, f"{target}: {name} {pkgs[name]}, the lock has {sorted(locked[name])}"
    allowed = set(ALLOW["base"]) | set(ALLOW["targets"][target])
    stray = sorted(set(pkgs) - allowed)
    assert not stray, (
        f"{target} installs packages its domain never imports (or not reviewed yet): {stray}; "
        "add them to integration_tests/install_allowlist.toml only if the domain needs them"
    )
    # the iclr26 packages are the wheels' copies inside the venv, not the checkout
    dist, extra = _dist_of(target)
    py = venv / "bin" / "python"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = im.clean_env()
    code = "import json, iclr26_shared, {m}; print(json.dumps([iclr26_shared.__file__, {m}.__file__]))"
    out = im.run([py, "-c", code.format(m=MODULES[dist])], cwd=outside, env=env)
    for f in json.loads(out.strip().splitlines()[-1]):
        assert Path(f).resolve().is_relative_to(venv.resolve()), f"{f} is not inside the venv"
    assert not any(str(ROOT) in p.read_text() for p in venv.glob("lib/python3*/site-packages/*.pth"))
    # every module imports; a module of a missing extra says so in one line
    probe = json.loads(im.run([py, "-c", PROBE, MODULES[dist]], cwd=outside, env=env).strip().splitlines()[-1])
    assert probe["modules"] > 1
    bad = {m: e for m, e in probe["errors"].items() if not e.startswith("MissingExtraError: ")}
    assert not bad, f"{target}: modules that fail to import from the wheel install: {bad}"
    if dist == "iclr26-science":
        for mod, err in probe["errors"].items():
            assert f"'{mod.split('.')[1]}' extra" in err or "extra" in err, (mod, err)
        if extra:
            assert not any(m.startswith(f"iclr26_science.{extra}") for m in probe["errors"]), probe["errors"]
    else:
        assert not probe["errors"], probe["errors"]
    for method, (code, text) in probe["help"].items():
        assert code == 0, f"{target}: {method} --help exited {code}"
        assert text.startswith("usage:"), f"{target}: {method} --help printed {text!r}"


def test_shared_ray_and_recsys_install_together(wheels: Path, tmp_path: Path) -> None:
    """recbole pinned ray<=2.6.3 against shared's ray>=2.40; the data now comes from a pinned file instead."""
    venv = tmp_path / "venv"
    im.run([im.uv(), "venv", "--python", sys.executable, venv], cwd=tmp_path)
    im.run(
        [im.uv(), "pip", "install", "--python", venv / "bin" / "python", "--find-links", wheels, "--no-build",
         "--exclude-newer", im.lock_cutoff(), "iclr26-shared[ray]", "iclr26-recsys"],
        cwd=tmp_path,
    )  # fmt: skip
    pkgs = im.installed_packages(venv / "bin" / "python")
    assert "ray" in pkgs and "recbole" not in pkgs and _major(pkgs["numpy"]) == "2"


def _smoke(venv: Path, dist: str, method: str, out: Path, *extra: str) -> dict[str, object]:
    env = im.clean_env()
    env.setdefault("MUJOCO_GL", "egl")
    env["FLWR_DISABLE_UPDATE_CHECK"] = "1"
    argv = [venv / "bin" / dist, method, "--preset", "smoke", "--device", "cpu", "--quiet", "--out-dir", out, *extra]
    text = im.run(argv, cwd=out.parent, env=env, timeout=1800)
    assert "run directory:" in text, text[-2000:]
    (run_dir,) = [d for d in (out / method).iterdir() if not d.name.startswith(".")]  # .render-cache etc.
    results = json.loads((run_dir / "results.json").read_text())
    assert results["claims"] and (run_dir / "report.md").is_file()
    return results


def test_federated_smoke_runs_from_its_wheel_on_the_default_engine(wheels: Path, tmp_path: Path) -> None:
    venv, _ = _install(wheels, tmp_path, "iclr26-federated")
    work = tmp_path / "elsewhere"
    work.mkdir()
    _smoke(venv, "iclr26-federated", "fedopenmatch", work / "runs")
    listing = im.run([venv / "bin" / "iclr26", "list"], cwd=work)
    assert listing.strip().splitlines()[-1] == "domains installed: federated"


@pytest.mark.slow
def test_federated_runs_flwr_from_its_wheel_on_the_simulation_engine(wheels: Path, tmp_path: Path) -> None:
    """`--engine ray`: the app folder is generated from the installed package and `flwr run` submits it."""
    venv, _ = _install(wheels, tmp_path, "iclr26-federated")
    work = tmp_path / "elsewhere"
    work.mkdir()
    results = _smoke(venv, "iclr26-federated", "fedopenmatch", work / "runs", "--engine", "ray")
    assert results["engine"] == "ray"


#: Every method, and the target whose venv runs its smoke preset.
SMOKES = [
    ("iclr26-sequence-models", "selective-rope", "iclr26-sequence-models"),
    ("iclr26-sequence-models[llm]", "restrain", "iclr26-sequence-models"),
    ("iclr26-sequence-models[llm]", "semantic-voting", "iclr26-sequence-models"),
    ("iclr26-generative-vision", "s2-guidance", "iclr26-generative-vision"),
    ("iclr26-generative-vision", "dupa", "iclr26-generative-vision"),
    ("iclr26-generative-vision", "elvis", "iclr26-generative-vision"),
    ("iclr26-generative-vision", "causal-delta", "iclr26-generative-vision"),
    ("iclr26-graphs", "fgl", "iclr26-graphs"),
    ("iclr26-graphs", "ogmm", "iclr26-graphs"),
    ("iclr26-science[crystals]", "crystal-fourier-transformer", "iclr26-science"),
    ("iclr26-science[cryoem]", "cryolvm", "iclr26-science"),
    ("iclr26-science[fmri]", "brain-semantoks", "iclr26-science"),
    ("iclr26-science[proteins]", "protein-ttt", "iclr26-science"),
    ("iclr26-rl", "ego-foresight", "iclr26-rl"),
    ("iclr26-theory-metrics", "hsic-unlearning", "iclr26-theory-metrics"),
    ("iclr26-theory-metrics", "neural-collapse", "iclr26-theory-metrics"),
    ("iclr26-theory-metrics", "richness", "iclr26-theory-metrics"),
    ("iclr26-recsys", "deql", "iclr26-recsys"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("target", "method", "dist"), SMOKES, ids=[m for _, m, _ in SMOKES])
def test_every_method_smoke_runs_from_its_wheel(
    wheels: Path, tmp_path: Path, target: str, method: str, dist: str
) -> None:
    venv, _ = _install(wheels, tmp_path, target)
    work = tmp_path / "elsewhere"
    work.mkdir()
    _smoke(venv, dist, method, work / "runs")


def test_a_missing_extra_is_one_line_from_the_wheel(wheels: Path, tmp_path: Path) -> None:
    """restrain without the llm extra, and reproduce --backend ray without shared's ray extra: exit 2, one line."""
    venv, _ = _install(wheels, tmp_path, "iclr26-sequence-models")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = im.clean_env()
    for argv, needle in (
        ([venv / "bin" / "iclr26-sequence-models", "restrain", "--preset", "smoke", "--out-dir", work],
         "restrain needs the 'llm' extra of iclr26-sequence-models"),
        ([venv / "bin" / "iclr26-sequence-models", "semantic-voting", "--preset", "smoke", "--out-dir", work],
         "semantic-voting needs the 'llm' extra of iclr26-sequence-models"),
        ([venv / "bin" / "iclr26", "reproduce", "--backend", "ray", "--preset", "smoke", "--out-dir", work],
         "iclr26 reproduce --backend ray needs the 'ray' extra of iclr26-shared"),
    ):  # fmt: skip
        res = subprocess.run([str(a) for a in argv], cwd=work, env=env, capture_output=True, text=True)
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.returncode == 2, res.stderr[-2000:]
        assert len(lines) == 1 and needle in lines[0] and "pip install" in lines[0], res.stderr


def test_no_dependency_metadata_overrides_are_left() -> None:
    """A user's install never sees the root pyproject: nothing may depend on its overrides."""
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "dependency-metadata" not in root.get("tool", {}).get("uv", {})
