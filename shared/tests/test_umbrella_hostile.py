"""Hostile input to the umbrella (issue 52 §3): each case is one line on stderr and exit 2, before any run.

`reproduce --resume` with flags that contradict the stored plan, an empty `--only`, a malformed
report.json, a stored CUDA device on a machine without one; two reproduces in the same second; `models`
on an empty folder or junk; `bench` with a bad root or selection; an empty, over-long or full out-dir."""

from __future__ import annotations

import errno
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from iclr26_shared import reproduce as reproduce_mod
from iclr26_shared import umbrella
from iclr26_shared.cli import run_methods
from iclr26_shared.io import unique_dir
from iclr26_shared.reproduce import RunOutcome
from iclr26_shared.testing import TOY_SPEC, run_cli

SPECS = {"toy-ridge": TOY_SPEC}
PLAN = {"methods": ["toy-ridge"], "seeds": [0, 1], "preset": "smoke", "backend": "process", "device": "cpu"}


@pytest.fixture(autouse=True)
def _toy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(umbrella, "discover_methods", lambda: (SPECS, {}))


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """run_one replaced by an instant success: the cases here are about what happens before/around runs."""
    started: list[tuple[str, int]] = []

    def fake_run_one(spec: Any, preset: str, flags: Any, alone: bool = False, config: Any = None) -> RunOutcome:
        started.append((spec.name, flags.seed))
        return RunOutcome(spec.name, spec.domain, spec.paper, flags.seed, True, 0.0)

    monkeypatch.setattr(reproduce_mod, "run_one", fake_run_one)
    return started


def _one_line(argv: list[str]) -> str:
    res = run_cli(umbrella.main, argv)
    lines = res.err.strip().splitlines()
    assert res.code == 2 and len(lines) == 1 and "Traceback" not in res.err, (argv, res.code, res.err)
    return lines[0]


def _stored(tmp_path: Path, **changes: Any) -> Path:
    folder = tmp_path / "reproduce-old"
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps({**PLAN, "runs": [], **changes}))
    return folder


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--preset", "full"], "--preset full contradicts the stored plan (preset smoke)"),
        (["--only", "other"], "--only other contradicts the stored plan (methods toy-ridge)"),
        (["--seeds", "3"], "--seeds contradicts the stored plan (seeds 0, 1)"),
        (["--seed", "5"], "--seed contradicts the stored plan"),
        (["--device", "auto"], "--device auto contradicts the stored plan (device cpu)"),
        (["--preset", "full", "--seeds", "3", "--only", "toy-ridge"], "--preset full contradicts"),
    ],
)
def test_resume_refuses_flags_that_contradict_the_stored_plan(
    tmp_path: Path, runs: list[tuple[str, int]], flags: list[str], words: str
) -> None:
    folder = _stored(tmp_path)
    assert words in _one_line(["reproduce", "--resume", str(folder), *flags])
    assert runs == []


def test_resume_accepts_flags_that_repeat_the_stored_plan(tmp_path: Path, runs: list[tuple[str, int]]) -> None:
    folder = _stored(tmp_path)
    argv = ["reproduce", "--resume", str(folder), "--preset", "smoke", "--seed", "0", "--seeds", "2", "--jobs", "1"]
    res = run_cli(umbrella.main, [*argv, "--only", "toy-ridge", "--device", "cpu"])
    assert res.code == 0, res.err
    assert runs == [("toy-ridge", 0), ("toy-ridge", 1)]


@pytest.mark.parametrize("only", [",", "", " , "])
def test_an_empty_only_is_an_error_not_every_method(tmp_path: Path, runs: list[tuple[str, int]], only: str) -> None:
    assert "names no method" in _one_line(["reproduce", f"--only={only}", "--out-dir", str(tmp_path)])
    assert runs == [] and not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"seeds": ["x"]}, "'seeds' = ['x']: expected a non-empty list of integers"),
        ({"seeds": []}, "'seeds' = []"),
        ({"seeds": [True]}, "'seeds' = [True]"),
        ({"seeds": [2**40]}, "'seeds' = [1099511627776]"),
        ({"seeds": "0"}, "'seeds' = '0'"),
        ({"methods": 5}, "'methods' = 5: expected a non-empty list of method names"),
        ({"methods": [None]}, "'methods' = [None]"),
        ({"preset": 5}, "'preset' = 5: expected a preset name"),
        ({"preset": "huge"}, "unknown preset 'huge' (choose from smoke, quick, full, or one a method defines)"),
        ({"device": 3}, "'device' = 3: expected a string"),
        ({"runs": {"a": 1}}, "'runs'"),
    ],
)
def test_a_malformed_report_json_is_one_line(
    tmp_path: Path, runs: list[tuple[str, int]], changes: dict[str, Any], words: str
) -> None:
    folder = _stored(tmp_path, **changes)
    assert words in _one_line(["reproduce", "--resume", str(folder)])
    assert runs == []


def test_a_report_json_that_is_not_an_object_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    for text in ("[1, 2]", "{", ""):
        (folder / "report.json").write_text(text)
        _one_line(["reproduce", "--resume", str(folder)])


def test_a_stored_cuda_device_is_refused_before_any_run_on_a_machine_without_one(
    tmp_path: Path, runs: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    folder = _stored(tmp_path, device="cuda")
    before = sorted(p.name for p in folder.iterdir())
    assert "no NVIDIA GPU" in _one_line(["reproduce", "--resume", str(folder)])
    assert runs == [] and sorted(p.name for p in folder.iterdir()) == before


def test_two_reproduces_in_the_same_second_get_two_folders(
    tmp_path: Path, runs: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reproduce_mod, "utc_stamp", lambda: "20260101T000000Z")
    argv = ["reproduce", "--preset", "smoke", "--jobs", "1", "--device", "cpu", "--out-dir", str(tmp_path)]
    assert run_cli(umbrella.main, argv).code == 0
    assert run_cli(umbrella.main, [*argv, "--seed", "7"]).code == 0
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert folders == ["reproduce-20260101T000000Z", "reproduce-20260101T000000Z-2"]
    seeds = [json.loads((tmp_path / f / "report.json").read_text())["seeds"] for f in folders]
    assert seeds == [[0], [7]]  # neither report vanished


def test_unique_dir_is_exclusive(tmp_path: Path) -> None:
    made = [unique_dir(tmp_path / "out", "x") for _ in range(3)]
    assert [p.name for p in made] == ["x", "x-2", "x-3"] and all(p.is_dir() for p in made)
    (tmp_path / "file").write_text("")
    with pytest.raises(Exception, match="cannot create the folder"):
        unique_dir(tmp_path / "file", "x")


def test_models_on_an_empty_folder_or_junk_is_one_line(tmp_path: Path) -> None:
    assert "not a run directory" in _one_line(["models", str(tmp_path)])
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01")
    assert "not a run directory" in _one_line(["models", str(tmp_path)])
    assert "no such run directory" in _one_line(["models", str(tmp_path / "junk.bin")])
    (tmp_path / "models" / "net").mkdir(parents=True)
    assert "no saved model in its models/ folder" in _one_line(["models", str(tmp_path)])
    (tmp_path / "models" / "net" / "iclr26_model.json").write_text("not json")
    assert "not readable JSON" in _one_line(["models", str(tmp_path)])
    (tmp_path / "models" / "net" / "iclr26_model.json").write_text('{"class": 5}')
    assert "expected a JSON object with a 'class' string" in _one_line(["models", str(tmp_path)])
    assert "expected a run directory" in _one_line(["models", ""])
    assert "File name too long" in _one_line(["models", "x" * 300])


def test_models_flags_a_corrupted_model_folder_in_one_line(tmp_path: Path) -> None:
    """iclr26 models lists without importing anything; a folder load_model would refuse for its class name
    or its weights file (truncated, a pickle named .safetensors) makes it exit 2 with one line naming it."""
    from safetensors.torch import save_file

    folder = tmp_path / "models" / "net"
    folder.mkdir(parents=True)
    (tmp_path / "config.json").write_text("{}")
    save_file({"w": torch.ones(4)}, str(folder / "model.safetensors"))
    (folder / "iclr26_model.json").write_text('{"class": "iclr26_shared.testing:ToyLinear"}')
    res = run_cli(umbrella.main, ["models", str(tmp_path)])
    assert res.code == 0 and "iclr26_shared.testing:ToyLinear\n" in res.out, res.err
    (folder / "iclr26_model.json").write_text('{"class": "evilmod:Net"}')  # outside the allow-list: listed
    res = run_cli(umbrella.main, ["models", str(tmp_path)])
    assert res.code == 0 and "evilmod:Net  (needs trust_class=)" in res.out
    (folder / "iclr26_model.json").write_text('{"class": "garbage"}')
    assert "model 'net' cannot be loaded" in _one_line(["models", str(tmp_path)])
    (folder / "iclr26_model.json").write_text('{"class": "iclr26_shared.testing:ToyLinear"}')
    whole = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(whole[: len(whole) // 2])
    assert "truncated" in _one_line(["models", str(tmp_path)])
    (folder / "model.safetensors").write_bytes(pickle.dumps({"w": 1}))
    assert "not a whole safetensors file" in _one_line(["models", str(tmp_path)])
    (folder / "model.safetensors").unlink()
    assert "no weights file" in _one_line(["models", str(tmp_path)])
    save_file({"w": torch.ones(4)}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text("{nope")
    assert "config.json: not readable JSON" in _one_line(["models", str(tmp_path)])


def test_bench_with_a_bad_root_or_selection_is_one_line(tmp_path: Path) -> None:
    assert "not the workspace" in _one_line(["bench", "--root", "/nope"])
    assert "not the workspace" in _one_line(["bench", "--root", str(tmp_path)])
    root = tmp_path / "ws"
    (root / "packages" / "p" / "benchmarks").mkdir(parents=True)
    (root / "packages" / "p" / "benchmarks" / "speed.py").write_text("")
    line = _one_line(["bench", "--root", str(root), "--only", "zzz", "--out-dir", str(tmp_path / "o")])
    assert "no benchmark script matches --only zzz (found: p/speed)" in line
    assert "names no script" in _one_line(["bench", "--root", str(root), "--only", ","])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv", [["--out-dir="], ["--out-dir", ""], ["--out-dir", "x" * 300]])
def test_an_empty_or_overlong_out_dir_is_one_line(
    tmp_path: Path, runs: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    line = _one_line(["reproduce", "--preset", "smoke", *argv])
    assert "expected a folder name" in line or "at most 255" in line
    res = run_cli(lambda a: run_methods(SPECS, a, prog="t"), ["toy-ridge", "--preset", "smoke", *argv])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert runs == [] and not any(tmp_path.iterdir())  # nothing written into the current folder


def test_a_full_disk_is_one_line_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC while a run writes (an OSError, or a safetensors/torch error wrapping its text)."""
    from iclr26_shared import runs as runs_mod

    class SafetensorError(Exception):  # what safetensors raises, by name
        pass

    for exc in (
        OSError(errno.ENOSPC, "No space left on device", "metrics.jsonl"),
        SafetensorError(
            'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })'
        ),
        OSError(errno.ENAMETOOLONG, "File name too long", "x" * 300),
    ):

        def boom(*args: Any, _exc: BaseException = exc, **kwargs: Any) -> None:
            raise _exc

        monkeypatch.setattr(runs_mod.RunDir, "log", boom)
        res = run_cli(
            lambda a: run_methods(SPECS, a, prog="t"),
            ["toy-ridge", "--preset", "smoke", "--out-dir", str(tmp_path), "--quiet"],
        )
        assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err, res.err
        assert "No space left on device" in res.err or "File name too long" in res.err
