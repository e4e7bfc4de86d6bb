"""The ``brain-semantoks`` method: config validation, claims logic, smoke CLI run, resume, bad inputs, light --help."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from iclr26_science import cli
from iclr26_science.methods.brain_semantoks.claims import claims, report
from iclr26_science.methods.brain_semantoks.config import PRESETS
from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import Arms, assert_models_roundtrip, assert_no_claim_holds, run_cli, smoke_run

NAME = "brain-semantoks"


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path_factory.getbasetemp() / "iclr26-data"))


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("crop", 40, "multiple of patch"),
        ("patch", 8, "SLConv kernel length 16"),
        ("heads", 3, "divisor of dim"),
        ("coupling_high", 0.1, "> coupling_low"),
        ("band_high", 0.3, "Nyquist"),
        ("mask_high", 0.5, ">= mask_low"),
        ("sim_length", 16, ">= crop"),
        ("probe_folds", 7, "<= n_probe/2"),
        ("id_windows", 14, "864 s HCP scan"),
        ("tokenizer", "conv", "one of"),
        ("scaling_fractions", (1.0,), "< 1"),
        ("n_probe", 4, ">= 6"),
    ],
)
def test_config_rejects_bad_values(field: str, value: Any, expected: str) -> None:
    with pytest.raises(ConfigError, match=field) as err:
        dataclasses.replace(PRESETS["smoke"], **{field: value})
    assert expected.split()[0] in str(err.value)


def test_presets_validate() -> None:
    assert set(PRESETS) == {"smoke", "quick", "full"}
    full = PRESETS["full"]
    assert (full.dim, full.depth, full.heads, full.crop, full.patch, full.proj_dim) == (768, 8, 12, 100, 20, 128)
    # official-code defaults, the earlier port behind switches
    assert (full.network_mask_count, full.qkv_bias, full.mask_token_std) == ("official", False, 0.02)


def test_build_encoder_follows_the_switches() -> None:
    from iclr26_science.fmri.semantoks import Block
    from iclr26_science.methods.brain_semantoks.model import build_encoder

    def _qkv(enc: Any) -> Any:
        return next(m for m in enc.modules() if isinstance(m, Block)).qkv

    groups = [[0, 1], [2, 3]]
    enc = build_encoder(PRESETS["smoke"], groups)
    assert _qkv(enc).bias is None and float(enc.mask_token.detach().abs().sum()) > 0
    old = build_encoder(dataclasses.replace(PRESETS["smoke"], qkv_bias=True, mask_token_std=0.0), groups)
    assert _qkv(old).bias is not None and float(old.mask_token.detach().abs().sum()) == 0


def _results(
    ours: float, mae: float, fc: float, ident: tuple[float, float], scaling: tuple[float, float],
    fc_ident: float = 0.5, spectral: float = 0.8,
) -> dict[str, Any]:  # fmt: skip
    def m(p: float, i: float, pool: int) -> dict[str, Any]:
        return {"probe_bacc": p, "probe_sd": 0.0, "identification": i, "hcp_identification": 0.3, "pool": pool}

    return {
        "models": {"brain-semantoks": m(ours, ident[0], 64), "brain-semantoks@0.25": m(0.5, scaling[0], 16),
                   "mask-reconstruct": m(mae, ident[1], 64), "fc": m(fc, fc_ident, 0)},
        "control": {"spectral_bacc": spectral, "spectral_identification": 0.2, "fc_coupling_bacc": 0.7},
        "chance": {"probe": 1 / 3, "identification": 1 / 48, "hcp_identification": 1 / 7, "scaling": 1 / 48},
        "scaling_metric": "identification",
        "scaling": [(16, scaling[0]), (64, scaling[1])],
        "data": {"probe_target_name": "bifurcation", "probe_subjects": 48},
        "config": {"control_margin": 0.2, "fc_trivial_max": 0.9},
    }  # fmt: skip


def _verdicts(res: dict[str, Any]) -> list[str]:
    return [c.verdict for c in claims(res)]


def test_claims_follow_the_numbers() -> None:
    assert _verdicts(_results(0.8, 0.5, 0.7, (0.9, 0.4), (0.5, 0.8))) == ["holds"] * 5
    v = _verdicts(_results(0.6, 0.5, 0.7, (0.3, 0.4), (0.8, 0.6), fc_ident=0.95, spectral=0.4))
    assert v == ["fails"] * 5  # FC beats ours, MAE identifies better, more data hurt, no phenotype, FC trivial


def test_no_claim_holds_at_chance() -> None:
    c, i = 1 / 3, 1 / 48
    v = _verdicts(_results(c, c, c, (i, i), (i, i), spectral=c))
    assert "holds" not in v[:4] and v[:3] == ["inconclusive"] * 3 and v[3] == "fails"


def test_claim_targets_and_bounds_come_from_the_results() -> None:
    cs = claims(_results(0.8, 0.5, 0.7, (0.9, 0.4), (0.5, 0.8)))
    assert "bifurcation class" in cs[0].claim and "48 simulated subjects" in cs[1].metric
    assert cs[2].chance == 1 / 48 and "identification" in cs[2].metric
    assert cs[4].threshold == 0.9 and cs[4].better == "lower"


def test_report_has_the_table() -> None:
    text = re.sub(r" +", " ", report(_results(0.8, 0.5, 0.7, (0.9, 0.4), (0.5, 0.8))))  # markdown_table pads the cells
    assert "| brain-semantoks | 0.800 | 0.000 | 0.900 | 0.300 | — | 64 |" in text and "Scaling" in text
    assert "probe the phenotype at 0.800 and identify 0.200" in text and "global coupling at 0.700" in text


def test_smoke_run_writes_a_valid_run_dir(tmp_path: Path) -> None:
    run, results = smoke_run(cli.METHODS[NAME], tmp_path)
    assert set(results["models"]) == {"brain-semantoks", "brain-semantoks@0.5", "mask-reconstruct", "fc", "random-init"}
    assert results["data"]["rois"] == 80 and results["data"]["hcp_subjects"] == 7
    assert results["data"]["probe_subjects"] == 12 and results["data"]["probe_scans"] == 24
    assert results["chance"]["identification"] == 1 / 12 and 0 <= results["control"]["spectral_bacc"] <= 1
    assert [n for n, _ in results["scaling"]] == [4, 8]
    assert len(results["claims"]) == 5
    assert all(-1.0 <= m["subject_cosine"] <= 1.0 for m in results["models"].values())
    assert (run.path / "figures" / "probe.png").is_file()
    import torch

    from iclr26_science.fmri import SemantoksEncoder
    from iclr26_shared import load_model

    x = torch.randn(2, 80, PRESETS["smoke"].crop, generator=torch.Generator().manual_seed(0))
    assert_models_roundtrip(run, {"brain-semantoks": lambda m: m.features(x)})
    assert isinstance(load_model(run.path), SemantoksEncoder)
    results = json.loads(json.dumps(results))  # as results.json holds it (lists, not tuples)
    chance = results["chance"]["probe"]
    arms = [
        Arms(ours=["models/brain-semantoks/probe_bacc"], others=["models/mask-reconstruct/probe_bacc",
             "models/fc/probe_bacc", "scaling/0/1"], trivial=chance, worse=chance - 0.1),
        Arms(ours=["models/brain-semantoks/identification"], others=["models/mask-reconstruct/identification"],
             trivial=results["chance"]["identification"], worse=0.0),
        Arms(ours=["scaling/1/1"], others=["scaling/0/1"], trivial=results["chance"]["scaling"], worse=0.0),
        Arms(ours=["control/spectral_bacc"], others=[], trivial=chance, worse=chance - 0.1),
    ]  # fmt: skip
    ident = results["chance"]["identification"]
    collapsed = copy.deepcopy(results)  # a collapsed encoder: every subject the same feature, probe at chance
    collapsed["models"]["brain-semantoks"].update(probe_bacc=chance, identification=ident)
    collapsed["scaling"][-1][1] = ident
    fc_dead = copy.deepcopy(results)  # the baselines (and the controlled check) at chance
    for m in ("fc", "mask-reconstruct"):
        fc_dead["models"][m]["probe_bacc"] = chance
    fc_dead["models"]["mask-reconstruct"]["identification"] = ident
    fc_dead["control"]["spectral_bacc"] = chance
    fc_trivial = copy.deepcopy(results)  # FC identifies every simulated subject: the task is FC's by design
    fc_trivial["models"]["fc"]["identification"] = 1.0
    assert_no_claim_holds(claims, results, arms, extra_cases={"collapsed encoder": collapsed,
                                                              "baselines at chance": fc_dead,
                                                              "FC-trivial identification": fc_trivial})  # fmt: skip


def test_resume_skips_finished_models(tmp_path: Path) -> None:
    from iclr26_shared.runner import CommonFlags, execute

    spec = cli.METHODS[NAME]
    cfg = dataclasses.replace(spec.preset("smoke"), scaling_fractions=(), subcortical=True)
    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path, quiet=True)
    run, first, _ = execute(spec, cfg, flags)
    assert first["data"]["rois"] == 94 and first["data"]["networks"][-1] == "Subcortex"
    (run.path / "results.json").unlink()
    run.checkpoints()[-1][1].unlink()  # killed before FC / random-init were checkpointed
    run2, second, _ = execute(spec, cfg, dataclasses.replace(flags, resume=True))
    assert run2.path == run.path and second["models"] == first["models"]


class _Killed(BaseException):
    """Stands in for a SIGKILL inside the run (not an Exception: nothing in the runner handles it)."""


def test_killed_mid_variant_and_resumed_equals_an_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 52: the run dies after the first variant's checkpoint, inside the second variant (its training
    rows logged, its checkpoint not written); ``--resume`` gives the uninterrupted results.json and
    metrics.jsonl (rows keyed by stage=<variant>: no finished variant's row lost, no step-0 row twice).
    The subprocess SIGKILL version is integration_tests/test_kill_resume.py (slow)."""
    from iclr26_science.methods.brain_semantoks import train
    from iclr26_shared.kill_resume import compare_runs
    from iclr26_shared.runner import CommonFlags, execute

    spec = cli.METHODS[NAME]
    cfg = dataclasses.replace(spec.preset("smoke"), scaling_fractions=(0.5,), run_mae=False)
    whole, _, _ = execute(spec, cfg, CommonFlags(seed=0, device="cpu", out_dir=tmp_path / "whole", quiet=True))
    real, calls = train._evaluate, []

    def dies_in_the_second_variant(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise _Killed
        return real(*args, **kwargs)

    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path / "killed", quiet=True)
    monkeypatch.setattr(train, "_evaluate", dies_in_the_second_variant)
    with pytest.raises(_Killed):
        execute(spec, cfg, flags)
    monkeypatch.undo()
    killed = next((tmp_path / "killed").rglob("metrics.jsonl")).parent
    rows = [json.loads(line) for line in (killed / "metrics.jsonl").read_text().splitlines()]
    assert any("brain-semantoks@0.5/loss" in r for r in rows)  # the second variant had logged rows before it died
    resumed, _, _ = execute(spec, cfg, dataclasses.replace(flags, resume=True))
    assert resumed.path == killed
    assert compare_runs(whole.path, resumed.path) == []


def test_cli_rejects_a_bad_flag_with_exit_code_2(tmp_path: Path) -> None:
    res = run_cli(cli.main, [NAME, "--preset", "smoke", "--crop", "40", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "crop" in res.err and "Traceback" not in res.err


def test_help_imports_no_torch() -> None:
    code = (
        "import sys, iclr26_science, iclr26_science.cli as c\n"
        f"try:\n    c.main(['{NAME}', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules, 'neurolib' in sys.modules, 'nilearn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False False False"
