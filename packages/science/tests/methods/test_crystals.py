"""The ``crystals`` method: config validation, claims logic, smoke CLI run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from iclr26_science import cli
from iclr26_science.methods.crystals.claims import crystals_claims
from iclr26_science.methods.crystals.config import PRESETS, CrystalsConfig
from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import run_cli, smoke_run


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("groups", (0, 5)),
        ("holdout_groups", (231,)),
        ("per_group", 0),
        ("elements", ("Cu", "Fe")),
        ("heads", 3),
        ("lr", -1.0),
        ("generator", "random"),
        ("invariance_groups", 231),
    ],
)
def test_bad_config_names_the_field(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(PRESETS["smoke"], **{field: value})


def test_holdout_cannot_cover_every_group() -> None:
    with pytest.raises(ConfigError, match="holdout_groups"):
        CrystalsConfig(groups=(2, 14), holdout_groups=(2, 14))


def _results(holdout: float, plain: float, e3nn_mae: float) -> dict:
    model = {"test_mae": 0.2, "holdout_mae": holdout, "train_s_per_epoch": 1.0, "inference_structures_per_s": 100.0}
    return {
        "config": {"zero_shot_ratio": 1.5, "accuracy_ratio": 1.5},
        "invariance": {"groups_checked": 230, "max_rel_error": 1e-14},
        "mean_predictor": {"test_mae": 0.6, "holdout_mae": 0.6},
        "cft": model,
        "plain": {**model, "holdout_mae": plain},
        "e3nn": {**model, "test_mae": e3nn_mae, "train_s_per_epoch": 2.0, "inference_structures_per_s": 10.0},
    }


def test_claims_can_hold_and_fail() -> None:
    good = {c.metric: c.holds for c in crystals_claims(_results(0.25, 0.5, 0.2))}
    assert all(good.values()) and len(good) == 6
    bad = {c.metric: c.holds for c in crystals_claims(_results(0.5, 0.4, 0.1))}
    assert not bad["MAE eV/atom (held-out vs seen test)"]
    assert not bad["held-out MAE eV/atom (CFT vs plain PE)"]
    assert not bad["seen-group test MAE eV/atom (CFT vs e3nn)"]


def test_smoke_run_writes_a_valid_run_dir(tmp_path: Path) -> None:
    run, results = smoke_run(cli.METHODS["crystals"], tmp_path)
    assert results["invariance"]["max_rel_error"] < 1e-9
    for model in ("cft", "plain", "e3nn"):
        assert results[model]["test_mae"] >= 0 and results[model]["num_params"] > 0
    assert len(results["claims"]) == 6
    assert (run.path / "figures" / "mae.png").is_file()
    rows = [json.loads(line) for line in (run.path / "metrics.jsonl").read_text().splitlines()]
    assert any("cft/val_mae" in r for r in rows)


def test_resume_continues_from_the_last_phase_exactly(tmp_path: Path) -> None:
    from iclr26_shared.runner import CommonFlags, execute

    spec = cli.METHODS["crystals"]
    cfg = dataclasses.replace(spec.preset("smoke"), invariance_groups=2, run_plain=False)
    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path, quiet=True)
    run, first, _ = execute(spec, cfg, flags)
    metrics = (run.path / "metrics.jsonl").read_text()
    (run.path / "results.json").unlink()  # as if killed ...
    run.checkpoints()[-1][1].unlink()  # ... before the last phase (e3nn) was checkpointed
    run2, second, _ = execute(spec, cfg, dataclasses.replace(flags, resume=True))
    assert run2.path == run.path
    assert second["cft"] == first["cft"] and "plain" not in second  # not re-run
    for key in ("best_val_mae", "test_mae", "holdout_mae", "real_mae"):  # re-run from its own seed
        assert second["e3nn"][key] == first["e3nn"][key]
    strip = [{k: v for k, v in json.loads(r).items() if "time" not in k} for r in metrics.splitlines()]
    again = [
        {k: v for k, v in json.loads(r).items() if "time" not in k}
        for r in (run.path / "metrics.jsonl").read_text().splitlines()
    ]  # noqa: E501
    assert again == strip  # trimmed to the checkpoint, then the e3nn rows logged once more


def test_cli_rejects_a_bad_flag_with_exit_code_2(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["crystals", "--preset", "smoke", "--per-group", "0", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "per_group" in res.err
