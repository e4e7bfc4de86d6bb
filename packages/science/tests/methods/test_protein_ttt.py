"""The ``protein-ttt`` method: config validation, claims logic, smoke CLI run, resume, light --help."""

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
from iclr26_science.methods.protein_ttt.claims import UNIFORM_PERPLEXITY, claims, report
from iclr26_science.methods.protein_ttt.config import PRESETS, ProteinTTTConfig
from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import Arms, assert_no_claim_holds, run_cli, smoke_run

NAME = "protein-ttt"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("lr", 0.0, "> 0"),
        ("ags", 0, "> 0"),
        ("mask_ratio", 0.0, "> 0"),
        ("model", "esm3", "one of"),
        ("sequence_sets", ("uniprot",), "one of"),
        ("sequence_sets", ("esm-readme", "esm-readme"), "distinct"),
        ("potts_length", 4, ">= 8"),
        ("esm2_heads", 3, "divisor of esm2_width"),
        ("weak_threshold", 2.0, r"\[-1, 1\]"),
        ("control_margin", 1.5, "<= 1"),
    ],
)
def test_bad_config_names_the_field(field: str, value: object, expected: str) -> None:
    with pytest.raises(ConfigError, match=rf"'{field}.*{expected}"):
        dataclasses.replace(PRESETS["smoke"], **{field: value})


def test_nothing_to_evaluate_is_rejected() -> None:
    with pytest.raises(ConfigError, match="sequence_sets"):
        ProteinTTTConfig(sequence_sets=(), potts_families=0)


def _results(ppl: tuple[float, float], rho: tuple[float, float], msa: float, reset: float = 0.0) -> dict[str, Any]:
    return {
        "config": {"perplexity_margin": 0.01, "spearman_margin": 0.02, "control_margin": 0.1},
        "perplexity_summary": {"mean_ppl_base": ppl[0], "mean_ppl_ttt": ppl[1], "max_reset_logit_diff": reset,
                               "mean_log_ppl_base": math.log(ppl[0]), "mean_log_ppl_ttt": math.log(ppl[1]),
                               "win_fraction": 1.0 if ppl[1] < ppl[0] else 0.0, "max_reset_param_diff": 0.0},
        "fitness_summary": {"mean_rho_base_weak": rho[0], "mean_rho_ttt_weak": rho[1], "mean_rho_base": rho[0],
                            "mean_rho_msa_ttt": msa, "weak_threshold": 0.3, "weak_families": 3},
    }  # fmt: skip


def _verdicts(results: dict[str, Any]) -> list[str]:
    return [c.verdict for c in claims(results)]


def test_claims_can_hold_and_fail() -> None:
    assert _verdicts(_results((8.0, 4.0), (0.1, 0.2), 0.5)) == ["holds"] * 5
    assert _verdicts(_results((4.0, 8.0), (0.2, 0.1), 0.12, reset=1e-6)) == ["fails"] * 5


def test_claim_1_is_not_decided_by_one_off_distribution_protein() -> None:
    """The issue's case: three sequences improve a little, one (VL 1.10 -> 19.1) breaks; the raw mean of
    the perplexities falls (39.6, 36.2 dominate), the mean log-perplexity and the per-sequence wins do not."""
    base, tuned = [39.6, 36.2, 1.10, 5.0], [30.0, 28.0, 19.1, 4.9]
    res = _results((sum(base) / 4, sum(tuned) / 4), (0.1, 0.2), 0.5)
    res["perplexity_summary"].update(
        mean_log_ppl_base=sum(map(math.log, base)) / 4, mean_log_ppl_ttt=sum(map(math.log, tuned)) / 4,
        win_fraction=0.75,
    )  # fmt: skip
    (c1, wins) = claims(res)[:2]
    assert c1.verdict == "fails" and c1.gain < 0  # log: the collapse of VL outweighs the small gains
    res["perplexity_summary"]["win_fraction"] = 0.5
    assert claims(res)[1].verdict == "fails"  # half the sequences is not "most"
    assert wins.verdict == "holds"


def test_no_claim_holds_at_chance() -> None:
    """Uniform-guess perplexity and zero Spearman on the base side show nothing; TTT worse than the
    trivial answer (perplexity above uniform, Spearman below 0) fails (strict verdicts)."""
    v = _verdicts(_results((UNIFORM_PERPLEXITY, UNIFORM_PERPLEXITY + 5), (0.0, -0.1), -0.05))
    assert v[0] == "fails" and v[3] == "fails" and v[4] == "fails"
    # both sides exactly at chance: inconclusive, never holds
    v = _verdicts(_results((UNIFORM_PERPLEXITY, UNIFORM_PERPLEXITY), (0.0, 0.0), 0.0))
    assert v[0] == v[3] == v[4] == "inconclusive" and v[1] == "fails"


def test_weak_targets_are_selected_on_one_half_and_scored_on_the_other() -> None:
    """A family is "weak" by its base ρ on the selection half; the claim's means read the scored half only
    (a family that looks weak on the scored half but not on the selection half is not in)."""
    from iclr26_science.methods.protein_ttt.train import summarise

    def row(select: float, scored: float, ttt: float, full: float) -> dict[str, Any]:
        return {"rho_base_select": select, "rho_base_scored": scored, "rho_ttt_scored": ttt, "rho_base": full,
                "rho_ttt": full + 0.1, "rho_profile": 0.0}  # fmt: skip

    fitness = [row(0.1, 0.50, 0.60, 0.3), row(0.2, -0.10, 0.20, 0.0), row(0.9, 0.05, 0.90, 0.8)]
    s = summarise([], fitness, dataclasses.replace(PRESETS["smoke"], weak_threshold=0.3))["fitness_summary"]
    assert s["weak_families"] == 2 and s["families"] == 3
    assert s["mean_rho_base_weak"] == pytest.approx((0.50 - 0.10) / 2)  # scored half, not the selection half
    assert s["mean_rho_ttt_weak"] == pytest.approx((0.60 + 0.20) / 2)
    assert s["mean_rho_base"] == pytest.approx((0.3 + 0.0 + 0.8) / 3) and math.isnan(s["mean_rho_msa_ttt"])


def test_report_has_the_per_target_tables() -> None:
    res = _results((8.0, 4.0), (0.1, 0.2), 0.5)
    res["perplexity"] = [{"name": "vh", "source": "x", "length": 3, "ppl_base": 8.0, "ppl_ttt": 4.0,
                          "ttt_seconds": 1.0, "reset_logit_diff": 0.0}]  # fmt: skip
    res["fitness"] = [{"family": 0, "length": 8, "mutants": 152, "rho_base": 0.1, "rho_ttt": 0.2, "rho_msa_ttt": 0.5,
                       "rho_profile": 0.8, "ppl_base": 30.0, "ppl_ttt": 10.0}]  # fmt: skip
    text = re.sub(r" +", " ", report(res))  # markdown_table pads the cells
    assert "| vh | x | 3 | 8.000 | 4.000 |" in text and "| 0 | 8 | 152 | yes | 0.100 | 0.200 | 0.500 | 0.800 |" in text


def test_smoke_run_writes_a_valid_run_dir(tmp_path: Path) -> None:
    run, results = smoke_run(cli.METHODS[NAME], tmp_path)
    assert len(results["perplexity"]) == 1 and len(results["fitness"]) == 2
    assert results["perplexity_summary"]["max_reset_logit_diff"] == 0.0
    assert results["perplexity_summary"]["min_ttt_logit_change"] > 0  # TTT moved the model before the reset
    assert all(r["mutants"] == 19 * 10 for r in results["fitness"])
    assert len(results["claims"]) == 5
    assert (run.path / "figures" / "spearman.png").is_file()
    # ProteinTTT trains no model to keep: every target's adaptation is reset (claim 2), nothing is saved
    assert not run.saved_models
    ps, fs = "perplexity_summary", "fitness_summary"
    log20 = math.log(UNIFORM_PERPLEXITY)
    arms = [
        Arms(ours=[f"{ps}/mean_log_ppl_ttt"], others=[f"{ps}/mean_log_ppl_base"], trivial=log20, worse=log20 + 1),
        Arms(ours=[f"{ps}/win_fraction"], others=[], trivial=0.5, worse=0.0),
        Arms(ours=[f"{fs}/mean_rho_ttt_weak", f"{fs}/mean_rho_msa_ttt"],
             others=[f"{fs}/mean_rho_base_weak", f"{fs}/mean_rho_base"], trivial=0.0, worse=-0.2),
        Arms(ours=[f"{ps}/max_reset_logit_diff"], others=[], trivial=1.0, worse=2.0),
    ]  # fmt: skip
    no_op = copy.deepcopy(results)  # TTT that does nothing: after == before everywhere
    no_op[ps].update(mean_log_ppl_ttt=no_op[ps]["mean_log_ppl_base"], win_fraction=0.0)
    no_op[fs].update(mean_rho_ttt_weak=no_op[fs]["mean_rho_base_weak"], mean_rho_msa_ttt=no_op[fs]["mean_rho_base"])
    assert_no_claim_holds(claims, results, arms, extra_cases={"TTT changes nothing": no_op})


def test_resume_skips_finished_targets(tmp_path: Path) -> None:
    from iclr26_shared.runner import CommonFlags, execute

    spec = cli.METHODS[NAME]
    cfg = dataclasses.replace(spec.preset("smoke"), control=False)
    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path, quiet=True)
    run, first, _ = execute(spec, cfg, flags)
    (run.path / "results.json").unlink()
    run.checkpoints()[-1][1].unlink()  # killed before the last family was checkpointed
    run2, second, _ = execute(spec, cfg, dataclasses.replace(flags, resume=True))
    assert run2.path == run.path
    strip = [{k: v for k, v in r.items() if k != "ttt_seconds"} for r in first["perplexity"]]
    assert [{k: v for k, v in r.items() if k != "ttt_seconds"} for r in second["perplexity"]] == strip
    assert second["fitness"] == first["fitness"]  # the re-run family reproduces exactly


def test_cli_rejects_a_bad_flag_with_exit_code_2(tmp_path: Path) -> None:
    res = run_cli(cli.main, [NAME, "--preset", "smoke", "--potts-length", "3", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "potts_length" in res.err and "Traceback" not in res.err


def test_missing_esm2_weights_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path))
    res = run_cli(cli.main, [NAME, "--preset", "smoke", "--model", "esm2_t6_8M_UR50D", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "esm2_t6_8M_UR50D.pt not found" in res.err and "Traceback" not in res.err


def test_help_imports_no_torch() -> None:
    code = (
        "import sys, iclr26_science, iclr26_science.cli as c\n"
        f"try:\n    c.main(['{NAME}', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules, 'esm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False False False"


def test_reference_switches_are_flags_with_the_reference_defaults() -> None:
    """ProteinTTT's switches (NaN/Inf skip, clipping, LR schedule, best-state reset, early stop) are CLI flags
    whose defaults are TTTSettings' (the reference's), and they reach the TTT recipe."""
    from iclr26_science.methods.protein_ttt.model import ttt_settings
    from iclr26_science.proteins import TTTSettings

    switches = ("score_every_step", "automatic_best_state_reset", "perplexity_early_stopping",
                "skip_nonfinite_grads", "gradient_clip", "gradient_clip_max_norm", "lr_scheduler",
                "lr_warmup_steps", "lr_min")  # fmt: skip
    ref = TTTSettings()
    cfg = ProteinTTTConfig()
    for name in switches:
        assert getattr(cfg, name) == getattr(ref, name), name
        assert f"--{name.replace('_', '-')}" in _help_text()
    changed = dataclasses.replace(cfg, gradient_clip=True, gradient_clip_max_norm=0.5, lr_scheduler="cosine_warmup",
                                  lr_warmup_steps=2, lr_min=1e-5, skip_nonfinite_grads=False,
                                  score_every_step=True, automatic_best_state_reset=False,
                                  perplexity_early_stopping=3.0)  # fmt: skip
    settings = ttt_settings(changed, seed=0)
    for name in switches:
        assert getattr(settings, name) == getattr(changed, name), name


def _help_text() -> str:
    res = run_cli(cli.main, [NAME, "--help"])
    return res.out + res.err
