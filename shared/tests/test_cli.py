"""Domain CLIs built by run_methods: parsing, presets, overrides, exit codes, one-line errors."""

import json
import re
from pathlib import Path

import pytest

from iclr26_shared.cli import DEFAULT_PRESET, parse_method_args, run_methods
from iclr26_shared.errors import UsageError
from iclr26_shared.testing import TOY_SPEC, assert_valid_run_dir, run_cli


def main(argv: list[str]) -> int:
    return run_methods([TOY_SPEC], argv, prog="toy", domain="testing")


def test_preset_then_overrides() -> None:
    cfg, flags, preset = parse_method_args(TOY_SPEC, ["--preset", "smoke", "--lr", "0.2", "--seed", "3"], prog="t")
    assert preset == "smoke" and cfg.steps == TOY_SPEC.presets["smoke"].steps and cfg.lr == 0.2 and flags.seed == 3
    cfg, _, preset = parse_method_args(TOY_SPEC, ["--preset=full"], prog="t")
    assert preset == "full" and cfg == TOY_SPEC.presets["full"]
    cfg, flags, preset = parse_method_args(TOY_SPEC, [], prog="t")
    assert preset == DEFAULT_PRESET and cfg == TOY_SPEC.presets[DEFAULT_PRESET] and flags.device == "auto"


def test_run_writes_a_valid_run_directory(tmp_path: Path) -> None:
    res = run_cli(main, ["toy-ridge", "--preset", "smoke", "--device", "cpu", "--quiet", "--out-dir", str(tmp_path)])
    assert res.code == 0, res.err
    run_dir = Path(res.out.split("run directory: ")[1].split()[0])
    results = assert_valid_run_dir(run_dir)
    assert results["claims"][0]["verdict"] == "holds"
    assert (run_dir / "figures" / "loss.png").is_file()
    assert re.search(r"\| claim +\| metric +\|", (run_dir / "report.md").read_text())
    cfg = json.loads((run_dir / "config.json").read_text())
    assert cfg["preset"] == "smoke" and cfg["config"]["steps"] == TOY_SPEC.presets["smoke"].steps


def test_resume_of_a_finished_run_returns_its_results(tmp_path: Path) -> None:
    argv = ["toy-ridge", "--preset", "smoke", "--device", "cpu", "--quiet", "--out-dir", str(tmp_path)]
    assert run_cli(main, argv).code == 0
    run_dir = next((tmp_path / "toy-ridge").iterdir())
    before = json.loads((run_dir / "results.json").read_text())
    res = run_cli(main, [*argv, "--resume"])
    assert res.code == 0 and len(list((tmp_path / "toy-ridge").iterdir())) == 1
    assert json.loads((run_dir / "results.json").read_text()) == before  # not run again, claims kept
    assert "[holds] minibatch SGD" in res.out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["toy-ridge", "--lr", "-1"], "config field 'lr' = -1.0: expected a number > 0"),
        (["toy-ridge", "--lr", "fast"], "--lr"),
        (["toy-ridge", "--no-such-flag", "1"], "Unrecognized options: --no-such-flag"),
        (["toy-ridge", "--preset", "paper"], "invalid choice 'paper' for argument '--preset'"),
        (["toy-ridge", "--preset"], "Missing value for argument '--preset'"),
        (["toy-ridge", "--device", "tpu", "--preset", "smoke"], "--device 'tpu': expected one of auto, cpu, cuda"),
        (["toy-ridge", "--batch-size", "999"], "config field 'batch_size' = 999: expected at most n = 256"),
        (["toy-ridg"], "did you mean 'toy-ridge'"),
    ],
)
def test_bad_usage_exits_2_with_one_line(argv: list[str], expected: str, tmp_path: Path) -> None:
    res = run_cli(main, [*argv, "--out-dir", str(tmp_path)] if argv[0] == "toy-ridge" else argv)
    assert res.code == 2
    assert len(res.err.strip().splitlines()) == 1, res.err
    assert expected in res.err
    assert "Traceback" not in res.err


def test_help_and_overview() -> None:
    res = run_cli(main, ["--help"])
    assert res.code == 0 and "toy-ridge" in res.out and "usage: toy <method>" in res.out
    res = run_cli(main, [])
    assert res.code == 2 and "toy-ridge" in res.err
    with pytest.raises(SystemExit) as exc:
        run_cli(lambda a: parse_method_args(TOY_SPEC, a, prog="t") and 0, ["--help"])
    assert exc.value.code == 0
    res = run_cli(main, ["toy-ridge", "--help"])
    assert res.code == 0 and "--checkpoint-every" in res.out and "smoke,quick,full" in res.out


def test_internal_failure_exits_1_with_traceback(tmp_path: Path) -> None:
    res = run_cli(main, ["toy-ridge", "--preset", "smoke", "--crash-at", "3", "--quiet", "--out-dir", str(tmp_path)])
    assert res.code == 1 and "Traceback" in res.err and "toy crash at step 3" in res.err


def test_corrupt_run_files_on_resume_exit_2(tmp_path: Path) -> None:
    argv = ["toy-ridge", "--preset", "smoke", "--device", "cpu", "--quiet", "--out-dir", str(tmp_path)]
    argv += ["--crash-at", "30"]
    assert run_cli(main, argv).code == 1
    ckpt = next(tmp_path.glob("toy-ridge/*/checkpoints/step-*.pt"))
    ckpt.write_bytes(ckpt.read_bytes()[:100])
    res = run_cli(main, [*argv, "--resume"])
    assert res.code == 2 and ckpt.name in res.err and len(res.err.strip().splitlines()) == 1


def test_methods_key_must_match_name() -> None:
    with pytest.raises(ValueError, match="differs"):
        run_methods({"other": TOY_SPEC}, ["--help"])


def test_usage_error_type() -> None:
    with pytest.raises(UsageError):
        parse_method_args(TOY_SPEC, ["--preset", "nope"], prog="t")


def test_unwritable_out_dir_and_empty_resume_say_so_in_one_line(tmp_path: Path) -> None:
    res = run_cli(main, ["toy-ridge", "--preset", "smoke", "--quiet", "--out-dir", "/dev/null/x"])
    assert res.code == 2 and "cannot create the run directory /dev/null/x" in res.err
    assert len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err
    res = run_cli(main, ["toy-ridge", "--preset", "smoke", "--quiet", "--resume", "--out-dir", str(tmp_path)])
    assert res.code == 0 and "--resume: no earlier toy-ridge run" in res.err and "starting a new run" in res.err


def test_dry_run_builds_steps_and_exits_0_without_a_run_directory(tmp_path) -> None:
    from iclr26_shared.cli import run_methods
    from iclr26_shared.dryrun import dry_run
    from iclr26_shared.testing import TOY_DDP_SPEC, TOY_SPEC, run_cli

    methods = {s.name: s for s in (TOY_SPEC, TOY_DDP_SPEC)}
    argv = ["toy-ddp", "--preset", "full", "--dim", "16", "--dry-run", "--device", "cpu", "--out-dir", str(tmp_path)]
    res = run_cli(lambda a: run_methods(methods, a, prog="t"), argv)
    assert res.code == 0, res.err
    assert "17 trainable parameters" in res.out and "peak RSS" in res.out  # 16 weights + 1 bias
    assert not any(tmp_path.iterdir())
    out = dry_run(TOY_DDP_SPEC, TOY_DDP_SPEC.preset("full"), "cpu")
    assert out["parameters"] == 9 and out["eval_loss"] < out["train_loss"] + 10 and out["peak_rss_bytes"] > 2**20
    res = run_cli(lambda a: run_methods(methods, a, prog="t"), ["toy-ridge", "--dry-run", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "--dry-run is not available" in res.err and len(res.err.strip().splitlines()) == 1


def test_help_shows_each_fields_bounds() -> None:
    from iclr26_shared.testing import TOY_SPEC, run_cli

    res = run_cli(lambda a: run_methods({TOY_SPEC.name: TOY_SPEC}, a, prog="t"), ["toy-ridge", "--help"])
    text = " ".join(res.out.split())
    assert res.code == 0 and "(default: 256; > 0)" in text and "(default: 0.1; >= 0)" in text, res.out
