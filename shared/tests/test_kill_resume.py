"""The kill-and-resume check (issue 52): the toy method passes it, and the comparison finds what a broken
resume leaves behind (a duplicated row, a changed value, other weights) while it ignores timing fields."""

import json
import shutil
from pathlib import Path

import pytest
import torch

from iclr26_shared.kill_resume import compare_runs, is_excluded_key, strip_timing
from iclr26_shared.runs import RunDir
from iclr26_shared.testing import ToyConfig, assert_resume_matches


def test_the_toy_method_killed_and_resumed_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    check = assert_resume_matches("toy-ridge", tmp_path, module="iclr26_shared.testing")
    assert check.killed_after == "step-000000020.pt"  # smoke: checkpoints every 20 of 60 steps
    rows = [json.loads(x) for x in (check.resumed / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 61))  # each step logged once
    assert set(check.seconds) == {"whole", "killed", "resume", "total"}


def test_timing_and_host_keys_are_excluded_and_nothing_else() -> None:
    for key in ("wall_s", "merge_seconds", "seconds_per_graph", "updates_per_s", "time_vs_cfg", "us_per_pair"):
        assert is_excluded_key(key), key
    for key in ("speedup", "clock", "steps", "loss", "sweep", "settings", "cpus_used", "class_accuracy"):
        assert not is_excluded_key(key), key
    results = {
        "acc": 0.5,
        "machine": {"wall_s": 3.0},
        "cost": [{"seconds": 1.0, "n": 2}],
        "claims": [
            {"claim": "fast", "timing": True, "ours": 2.0, "verdict": "holds", "metric": "s"},
            {"claim": "acc", "timing": False, "ours": 0.5, "verdict": "fails"},
        ],
    }
    assert strip_timing(results) == {
        "acc": 0.5,
        "cost": [{"n": 2}],
        "claims": [
            {"claim": "fast", "timing": True, "metric": "s"},
            {"claim": "acc", "timing": False, "ours": 0.5, "verdict": "fails"},
        ],
    }


def _finished(root: Path) -> Path:
    run = RunDir.create(root, "m", ToyConfig(), quiet=True)
    for step in (1, 2):
        run.log(step, loss=1.0 / step, seconds=0.1 * step, stage="a")
    run.log(1, acc=0.9, stage="b")
    run.write_results({"acc": 0.9, "wall_seconds": 1.0, "claims": []})
    (run.path / "models" / "net").mkdir(parents=True)
    from safetensors.torch import save_file

    save_file({"w": torch.ones(3)}, str(run.path / "models" / "net" / "model.safetensors"), {"a": "1", "b": "2"})
    run.close()
    return run.path


def test_compare_runs_finds_duplicated_rows_changed_values_and_weights(tmp_path: Path) -> None:
    a = _finished(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    assert compare_runs(a, b) == []
    # timing values differ freely; another interleaving of stages is fine; metadata key order is not compared
    rows = (b / "metrics.jsonl").read_text().splitlines()
    lines = [rows[2], rows[0], rows[1].replace('"seconds": 0.2', '"seconds": 9.0')]
    (b / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    from safetensors.torch import save_file

    save_file({"w": torch.ones(3)}, str(b / "models" / "net" / "model.safetensors"), {"b": "2", "a": "1"})
    assert compare_runs(a, b) == []
    (b / "metrics.jsonl").write_text("\n".join([*lines, rows[0]]) + "\n")  # a duplicated step-1 row
    diff = compare_runs(a, b)
    assert diff[0].startswith("metrics.jsonl: 3 rows uninterrupted vs 4 resumed; 0 only in the uninterrupted run")
    (b / "metrics.jsonl").write_text("\n".join([rows[1], rows[0], rows[2]]) + "\n")  # stage a out of order
    assert "in another order" in compare_runs(a, b)[-1]
    (b / "metrics.jsonl").write_text("\n".join(rows) + "\n")
    (b / "results.json").write_text(json.dumps({"acc": 0.8, "wall_seconds": 5.0, "claims": []}))
    assert compare_runs(a, b) == ["results.json/acc: 0.9 uninterrupted vs 0.8 resumed"]
    assert compare_runs(a, b, ignore=["acc"]) == []
    (b / "results.json").write_text((a / "results.json").read_text())
    save_file({"w": torch.zeros(3)}, str(b / "models" / "net" / "model.safetensors"), {"a": "1", "b": "2"})
    assert compare_runs(a, b) == ["models/net/model.safetensors: the weights differ"]


def test_restart_stage_and_untrimmed_checkpoints(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "m", ToyConfig(), quiet=True)
    run.log(5, stage="a", x=1)
    run.log(7, stage="b", x=2)
    run.save_checkpoint(1, {"done": ["a"]})
    run.close()
    again = RunDir.create(tmp_path, "m", ToyConfig(), resume=True, quiet=True)
    ckpt = again.load_checkpoint(trim=False)  # step 1 counts finished sub-runs, not logged steps
    assert ckpt is not None and ckpt[0] == 1 and len(again.read_metrics()) == 2
    again.log(1, stage="b", x=3)  # this process's own row of stage b is kept
    again.restart_stage("b")  # b starts over: the killed process's rows of b go, a's stay
    assert [(r["stage"], r["x"]) for r in again.read_metrics()] == [("a", 1), ("b", 3)]
    again.close()


@pytest.mark.parametrize("kill_after", [4])
def test_a_run_that_finishes_before_the_kill_is_reported(tmp_path: Path, kill_after: int) -> None:
    with pytest.raises(AssertionError, match="finished .* before writing checkpoint 4: nothing to resume from"):
        assert_resume_matches("toy-ridge", tmp_path, module="iclr26_shared.testing", kill_after=kill_after)
