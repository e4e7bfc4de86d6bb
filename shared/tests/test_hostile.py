"""What a hostile user hits (issue 34 §7): each is a one-line error or a quiet exit, never a traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr26_shared.cli import run_methods
from iclr26_shared.errors import ConfigError
from iclr26_shared.preflight import MAX_SEED
from iclr26_shared.runs import RunDir
from iclr26_shared.seeding import derive_seed, numpy_seed, seed_everything
from iclr26_shared.testing import TOY_DDP_SPEC, TOY_SPEC, ToyConfig, run_cli

METHODS = {s.name: s for s in (TOY_SPEC, TOY_DDP_SPEC)}


def _cli(argv: list[str]):
    return run_cli(lambda a: run_methods(METHODS, a, prog="t"), argv)


def _one_line(res) -> str:
    assert res.code == 2, (res.code, res.err)
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.err, res.err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "expect"),
    [
        (["toy-ridge", "--seed", "18446744073709551617"], "seed"),
        (["toy-ridge", "--seed", "-1"], "seed"),
        (["toy-ridge", "--preset="], "invalid choice '' for argument '--preset'"),
        (["toy-ridge", "--seeds", "0"], "--seeds 0: expected a number of seeds >= 1"),
        (["toy-ridge", "--device", "cuda:x"], "device"),
        (["toy-ridge", "--out-dir", "/dev/null/x"], "/dev/null is not a folder"),
    ],
)
def test_bad_common_flags_are_one_line_errors(argv: list[str], expect: str) -> None:
    assert expect in _one_line(_cli(argv))


def test_cuda_without_a_gpu_fails_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    t0 = time.perf_counter()
    line = _one_line(_cli(["toy-ridge", "--device", "cuda", "--out-dir", str(tmp_path)]))
    assert "no NVIDIA GPU" in line and time.perf_counter() - t0 < 5 and not any(tmp_path.iterdir())


def test_numpy_is_seeded_from_the_whole_seed() -> None:
    assert numpy_seed(7) == 7 and numpy_seed(2**32) == [0, 1] and numpy_seed(2**32 + 5) == [5, 1]
    draws = {}
    for seed in (0, 1, MAX_SEED):
        seed_everything(seed)
        draws[seed] = np.random.random(4)
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[MAX_SEED])
    seed_everything(0)
    assert np.array_equal(np.random.random(4), draws[0])  # seeds below 2**32 seed numpy as before
    with pytest.raises(ConfigError, match=r"seed.*2\*\*32 - 1"):
        seed_everything(MAX_SEED + 1)


def test_the_documented_maximum_seed_survives_derived_seeds() -> None:
    """Issue 52 §3: --seed 2**63 - 1 (then documented) overflowed torch in the methods' derived seeds
    (``seed * 1000 + k``). The bound is 2**32 - 1 now, and such derivations at it stay in int64;
    derive_seed (SeedSequence) takes any seed and names its streams."""
    assert MAX_SEED == 2**32 - 1
    for derived in (MAX_SEED * 1_000_003 + 10_007 * 99 + 10**4, (MAX_SEED + 1000 * MAX_SEED) * 100_003 + 10**6):
        torch.Generator().manual_seed(derived)  # fits (no "Overflow when unpacking long long")
    a, b = derive_seed(MAX_SEED, "eval", 3), derive_seed(MAX_SEED, "eval", 4)
    assert a != b and a == derive_seed(MAX_SEED, "eval", 3) and 0 <= a < 2**63
    assert derive_seed(1, 0) != derive_seed(0, 1000) and derive_seed(2**200, 1) < 2**63
    torch.Generator().manual_seed(derive_seed(2**63 - 1, 7))
    np.random.seed(derive_seed(2**63 - 1, "numpy", bits=32))
    with pytest.raises(ConfigError, match="seed"):
        derive_seed(-1)


def test_seed_bounds_at_the_cli(tmp_path: Path) -> None:
    assert "2**32 - 1" in _one_line(_cli(["toy-ridge", "--seed", str(MAX_SEED + 1), "--out-dir", str(tmp_path)]))
    assert "--seed + --seeds - 1" in _one_line(
        _cli(["toy-ridge", "--seed", str(MAX_SEED), "--seeds", "2", "--out-dir", str(tmp_path)])
    )
    res = _cli(["toy-ridge", "--preset", "smoke", "--seed", str(MAX_SEED), "--out-dir", str(tmp_path), "--quiet"])
    assert res.code == 0, res.err


def test_corrupt_newest_checkpoint_falls_back_to_the_older_one(tmp_path: Path, capsys) -> None:
    run = RunDir.create(tmp_path, "m", ToyConfig(), seed=0)
    run.save_checkpoint(1, {"w": torch.ones(2)})
    newest = run.save_checkpoint(2, {"w": torch.zeros(2)})
    newest.write_bytes(b"garbage")
    loaded = run.load_checkpoint()
    assert loaded is not None
    step, state = loaded
    assert step == 1 and torch.equal(state["w"], torch.ones(2))
    assert "resuming from the older checkpoint step-000000001.pt" in capsys.readouterr().err


def _subprocess(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


_TOY = "import sys; from iclr26_shared.testing import TOY_SPEC as S; from iclr26_shared.cli import run_methods; "


def test_sigterm_stops_a_run_with_one_line_and_it_resumes(tmp_path: Path) -> None:
    argv = ["toy-ridge", "--preset", "smoke", "--sleep-s", "0.05", "--quiet", "--out-dir", str(tmp_path)]
    proc = _subprocess(_TOY + "sys.exit(run_methods({S.name: S}, sys.argv[1:]))", *argv)
    deadline = time.time() + 60
    while time.time() < deadline and not list(tmp_path.glob("toy-ridge/*/checkpoints/*.pt")):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1].startswith("terminated (SIGTERM); rerun with --resume"), err
    assert "Traceback" not in err
    res = run_cli(
        lambda a: run_methods({TOY_SPEC.name: TOY_SPEC}, a), [*argv[:-2], "--out-dir", str(tmp_path), "--resume"]
    )
    assert res.code == 0, res.err
    assert len(list((tmp_path / "toy-ridge").iterdir())) == 1


def test_a_closed_pipe_exits_quietly() -> None:
    code = _TOY + "sys.exit(run_methods({S.name: S}, ['toy-ridge', '--help']))"
    proc = subprocess.run(
        f'{sys.executable} -c "{code}" | head -1', shell=True, capture_output=True, text=True, check=False
    )
    assert proc.stdout.startswith("usage:") and "Traceback" not in proc.stderr and "Error" not in proc.stderr
    iclr26 = Path(sys.executable).parent / "iclr26"
    proc = subprocess.run(f"{iclr26} list | head -1", shell=True, capture_output=True, text=True, check=False)
    assert proc.stdout.strip() and "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_main_guard_turns_a_broken_pipe_into_a_quiet_exit(capsys) -> None:
    from iclr26_shared.cli import main_guard

    def writer() -> int:
        raise BrokenPipeError(32, "Broken pipe")

    assert main_guard(writer) == 141
    assert capsys.readouterr().err == ""


def test_a_missing_input_the_config_names_fails_before_the_method_starts(tmp_path: Path) -> None:
    import dataclasses

    from iclr26_shared.data import check_dataset

    def check_inputs(cfg: ToyConfig) -> None:
        check_dataset("no-such-set")

    def never(cfg: ToyConfig, run: RunDir) -> dict:
        raise AssertionError("the run started although its input is missing")

    spec = dataclasses.replace(TOY_SPEC, check_inputs=check_inputs, run=never)
    for extra in ([], ["--dry-run"]):
        res = run_cli(
            lambda a: run_methods({spec.name: spec}, a, prog="t"), ["toy-ridge", "--out-dir", str(tmp_path), *extra]
        )
        assert "unknown data set 'no-such-set'" in _one_line(res)
    assert not any(tmp_path.iterdir())
