"""The ``cryolvm`` method: config validation, claims logic, smoke CLI run, resume, bad inputs, light --help."""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from iclr26_science import cli
from iclr26_science.methods.cryolvm.claims import amplitude_split_noise, claims, report
from iclr26_science.methods.cryolvm.config import PRESETS
from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import Arms, assert_models_roundtrip, assert_no_claim_holds, run_cli, smoke_run

NAME = "cryolvm"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("task", "denoise", "one of"),
        ("apix", 0.0, "> 0"),
        ("crop", 10, "multiple of 2\\^L = 4"),
        ("crop", 4, ">= 8"),
        ("depths", (1, 1), "2·L"),
        ("head_dim", 3, "divisor of dim/2"),
        ("bfactor_max", 10.0, ">= bfactor_min"),
        ("resolution", 4.0, "Nyquist"),
        ("tilt_max", 95.0, "< 90"),
        ("alpha", 1.5, "<= 1"),
        ("jepa_vc_weight", -1.0, ">= 0"),
        ("jepa_context", "mask", "one of"),
        ("amplitude_low", 5.0, "> resolution"),
        ("tile_stride", 64, "<= crop"),
        ("test_structures", ("5a7u",), "pretrain_structures"),
        ("test_structures", ("adk-open",), "adenylate kinase"),
        ("test_structures", ("1abc",), "one of"),
    ],
)
def test_bad_config_names_the_field(field: str, value: object, expected: str) -> None:
    with pytest.raises(ConfigError, match=rf"'{field}.*{expected}"):
        dataclasses.replace(PRESETS["smoke"], **{field: value})


def test_super_resolution_needs_a_lower_input_resolution() -> None:
    with pytest.raises(ConfigError, match="low_resolution"):
        dataclasses.replace(PRESETS["smoke"], task="super-resolution", low_resolution=5.0)


def test_presets_are_valid_and_full_is_the_paper_architecture() -> None:
    full = PRESETS["full"]
    assert full.crop == 48 and full.window == 4 and full.apix == 1.0 and full.depths == (2,) * 7 and not full.residual


def _metrics(cc_mask: float, fsc05: float, amp_dev: float | None = None) -> dict[str, float]:
    """Metrics of one method; the amplitude deviation falls as CC_mask rises unless given."""
    amp = 1.0 - cc_mask if amp_dev is None else amp_dev
    return {"cc_mask": cc_mask, "cc_box": cc_mask, "fsc05": fsc05, "fsc0143": fsc05 - 1, "amp_dev": amp}


def _results(
    ours: float, scratch: float, base: float, res: tuple[float, float], auc: tuple[float, float]
) -> dict[str, Any]:
    summary = {
        "input": _metrics(base - 0.1, res[1] + 1), "global-sharpen": _metrics(base, res[1]),
        "local-scale": _metrics(base - 0.05, res[1] + 0.5), "cryolvm": _metrics(ours, res[0]),
        "scratch": _metrics(scratch, res[0] + 0.2), "cryolvm-mse": _metrics(ours, res[0]),
    }  # fmt: skip
    return {
        "task": "sharpen",
        "summary": summary,
        "control": {"input": _metrics(base - 0.1, 5.0), "cryolvm": _metrics(ours, 4.0)},
        "curves": {
            "cryolvm": {"step": [0, 1], "val_cc": [auc[0]] * 2, "test_cc": [auc[0]] * 2},
            "cryolvm-mse": {"step": [0, 1], "val_cc": [auc[1]] * 2, "test_cc": [auc[1]] * 2},
        },
        "config": {"cc_margin": 0.0, "resolution_margin": 0.0, "control_margin": 0.05},
    }


def _verdicts(results: dict[str, Any]) -> list[str]:
    return [c.verdict for c in claims(results)]


def test_claims_can_hold_and_fail() -> None:
    assert _verdicts(_results(0.9, 0.8, 0.8, (4.0, 5.0), (0.7, 0.6))) == ["holds"] * 6
    assert _verdicts(_results(0.7, 0.8, 0.8, (6.0, 5.0), (0.5, 0.6))) == ["fails"] * 6


def test_the_best_baseline_is_the_reference() -> None:
    cs = claims(_results(0.9, 0.8, 0.85, (4.0, 5.0), (0.7, 0.6)))
    assert cs[0].reference == 0.85 and cs[1].reference == 5.0  # global sharpening is the best baseline here
    assert cs[2].reference == pytest.approx(0.15)  # and the closest spectrum (amplitude deviation 1 − 0.85)


def test_the_wiener_diagnostic_is_never_a_reference() -> None:
    """The fitted Wiener filter is reported, not a baseline: even at the best CC and spectrum it moves no claim."""
    res = _results(0.9, 0.8, 0.85, (4.0, 5.0), (0.7, 0.6))
    plain = [(c.reference, c.verdict) for c in claims(res)]
    res["summary"]["wiener"] = _metrics(0.99, 1.0, amp_dev=0.0)
    assert [(c.reference, c.verdict) for c in claims(res)] == plain


def test_no_claim_holds_at_chance() -> None:
    """Maps with no skill (CC 0 on both sides) show nothing."""
    v = _verdicts(_results(0.0, 0.0, 0.1, (6.0, 5.0), (0.0, 0.0)))
    assert "holds" not in v and v[3] == "inconclusive" and v[4] == "inconclusive"


def test_histogram_claim_scores_the_held_out_curve_not_the_tuning_curve() -> None:
    """α and the bins were chosen on the validation curve: a gain there alone shows nothing, the held-out
    crops' curve decides; results without that curve (older runs) leave the claim inconclusive."""
    res = _results(0.9, 0.8, 0.8, (4.0, 5.0), (0.7, 0.6))
    res["curves"]["cryolvm"]["test_cc"] = [0.6, 0.6]  # tied on held-out crops, ahead on validation
    hist = [c for c in claims(res) if "histogram" in c.claim]
    assert len(hist) == 1 and hist[0].ours == 0.6 and hist[0].verdict == "fails"
    for c in res["curves"].values():
        del c["test_cc"]
    assert [c.verdict for c in claims(res) if "histogram" in c.claim] == ["inconclusive"]


def test_spectrum_claim_sees_a_blurrier_map_and_skips_old_results() -> None:
    res = _results(0.9, 0.8, 0.8, (4.0, 5.0), (0.7, 0.6))
    res["summary"]["cryolvm"]["amp_dev"] = 0.19  # within amplitude_margin (0.02) of global sharpening's 0.2
    amp = [c for c in claims(res) if c.metric.startswith("mean amplitude deviation")]
    assert len(amp) == 1 and amp[0].verdict == "fails"
    for v in res["summary"].values():
        del v["amp_dev"]
    assert not any(c.metric.startswith("mean amplitude deviation") for c in claims(res))


def test_spectrum_margin_is_the_held_out_split_noise_when_it_exceeds_the_minimum() -> None:
    import numpy as np

    res = _results(0.9, 0.8, 0.8, (4.0, 5.0), (0.7, 0.6))  # global sharpening (amp_dev 0.2) is the best baseline
    ours, base = [0.02, 0.30, 0.05, 0.11], [0.20, 0.21, 0.19, 0.20]
    res["test"] = {
        f"s{k}": {"cryolvm": _metrics(0.9, 4.0, a), "global-sharpen": _metrics(0.8, 5.0, b)}
        for k, (a, b) in enumerate(zip(ours, base, strict=True))
    }
    d = np.subtract(ours, base)
    se = float(np.std(d, ddof=1) / np.sqrt(len(d)))
    assert amplitude_split_noise(res, "global-sharpen") == pytest.approx(se, rel=1e-12)
    assert se > 0.02
    res["summary"]["cryolvm"]["amp_dev"] = 0.2 - 0.9 * se  # beats the baseline by more than 0.02, less than SE
    amp = [c for c in claims(res) if c.metric.startswith("mean amplitude deviation")]
    assert len(amp) == 1 and amp[0].margin == pytest.approx(se) and amp[0].verdict == "fails"
    res["summary"]["cryolvm"]["amp_dev"] = 0.2 - 1.1 * se
    assert [c.verdict for c in claims(res) if c.metric.startswith("mean amplitude deviation")] == ["holds"]
    res["test"] = {"s0": res["test"]["s0"]}  # one structure: no noise estimate, the configured minimum
    assert math.isnan(amplitude_split_noise(res, "global-sharpen"))
    assert [c.margin for c in claims(res) if c.metric.startswith("mean amplitude deviation")] == [0.02]


def test_report_has_the_tables() -> None:
    res = _results(0.9, 0.8, 0.8, (4.0, 5.0), (0.7, 0.6))
    res["test"] = {"1hvr": {"input": _metrics(0.5, 6.0), "cryolvm": _metrics(0.9, 4.0)}}
    text = re.sub(r" +", " ", report(res))  # markdown_table pads the cells
    assert "| 1hvr | cryolvm | 4.00 | 3.00 | 0.900 | 0.900 |" in text and "| **mean** | global-sharpen |" in text


def test_smoke_run_writes_a_valid_run_dir(tmp_path: Path) -> None:
    run, results = smoke_run(cli.METHODS[NAME], tmp_path)
    assert set(results["summary"]) == {
        "input", "global-sharpen", "local-scale", "wiener", "cryolvm", "scratch", "cryolvm-mse"
    }  # fmt: skip
    assert results["structures"]["test"] == ["gramicidin"] and len(results["structures"]["train"]) == 2
    assert all(len(c["val_cc"]) == len(c["test_cc"]) == 3 for c in results["curves"].values())  # steps 0, 2, 4
    assert len(results["claims"]) == 6
    assert (run.path / "figures" / "val_cc.png").is_file() and (run.path / "figures" / "test_cc.png").is_file()
    for metrics in results["summary"].values():  # the spectrum metrics are measured for every method
        assert metrics["amp_dev"] >= 0 and abs(metrics["delta_b"]) < 1e4
    _check_saved_network_restores_a_map(run, tmp_path)
    methods = ["summary/input", "summary/global-sharpen", "summary/local-scale"]
    arms = [
        Arms(ours=["summary/cryolvm/cc_mask"], others=[f"{m}/cc_mask" for m in methods] + ["summary/scratch/cc_mask"],
             trivial=0.0, worse=-0.1),
        Arms(ours=["summary/cryolvm/fsc05"], others=[f"{m}/fsc05" for m in methods], trivial=99.0, worse=120.0),
        Arms(ours=["summary/cryolvm/amp_dev"], others=[f"{m}/amp_dev" for m in methods], trivial=9.0, worse=12.0),
        Arms(ours=["curves/cryolvm/test_cc"], others=["curves/cryolvm-mse/test_cc"], trivial=0.0, worse=-0.1),
        Arms(ours=["control/cryolvm/cc_mask"], others=["control/input/cc_mask"], trivial=0.0, worse=-0.1),
    ]  # fmt: skip
    collapsed = copy.deepcopy(results)  # the network outputs the input map back (a collapsed identity model)
    for part in ("summary", "control"):
        collapsed[part]["cryolvm"] = dict(collapsed[part]["input"])
    assert_no_claim_holds(claims, results, arms, extra_cases={"model returns its input": collapsed})


def _check_saved_network_restores_a_map(run: Any, tmp_path: Path) -> None:
    """The saved network loads bit for bit, and restore(map, model) runs on a map of another voxel size
    and box (resampled to the network's 1.5 Å, padded, tiled, cropped back, written as MRC)."""
    import numpy as np
    import torch

    from iclr26_science.cryoem import SCUNet3D, load_structure, molmap, read_map, restore
    from iclr26_shared import load_model

    probe = torch.rand(1, 1, 8, 8, 8, generator=torch.Generator().manual_seed(0))
    assert_models_roundtrip(run, {"cryolvm": probe})
    net = load_model(run.path)
    assert isinstance(net, SCUNet3D) and net.apix == PRESETS["smoke"].apix and net.crop == PRESETS["smoke"].crop
    m = molmap(load_structure("gramicidin"), 6.0, 2.0)
    out = restore(m, net, out=tmp_path / "restored.mrc")
    assert out.apix == net.apix and np.isfinite(out.data).all()
    assert abs(out.data.shape[0] * net.apix - m.data.shape[0] * 2.0) <= net.apix  # the same box
    assert read_map(tmp_path / "restored.mrc").data.shape == out.data.shape


def test_missing_wedge_smoke_and_resume(tmp_path: Path) -> None:
    from iclr26_shared.runner import CommonFlags, execute

    spec = cli.METHODS[NAME]
    cfg = dataclasses.replace(spec.preset("smoke"), task="missing-wedge", compare_mse=False)
    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path, quiet=True)
    run, first, _ = execute(spec, cfg, flags)
    (run.path / "results.json").unlink()
    run.checkpoints()[-1][1].unlink()  # killed before the scratch variant was checkpointed
    run2, second, _ = execute(spec, cfg, dataclasses.replace(flags, resume=True))
    assert run2.path == run.path
    assert second["test"] == first["test"] and second["curves"] == first["curves"]  # the rerun variant is exact


def test_cli_rejects_a_bad_flag_with_exit_code_2(tmp_path: Path) -> None:
    res = run_cli(cli.main, [NAME, "--preset", "smoke", "--crop", "10", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "crop" in res.err and "Traceback" not in res.err


def test_help_imports_no_torch() -> None:
    code = (
        "import sys, iclr26_science, iclr26_science.cli as c\n"
        f"try:\n    c.main(['{NAME}', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules, 'mrcfile' in sys.modules, 'MDAnalysis' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False False False"
