"""The ``restrain`` method: config validation, variant reductions, claims, and a smoke CLI run."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from iclr26_sequence_models import cli
from iclr26_sequence_models.methods.restrain.claims import claims, report
from iclr26_sequence_models.methods.restrain.config import (
    PRESETS,
    TRL_NAMES,
    VARIANTS,
    RestrainConfig,
    RestrainTrainConfig,
)
from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import assert_valid_run_dir, run_cli


def test_config_validation() -> None:
    with pytest.raises(ConfigError, match="kappa"):
        RestrainConfig(kappa=9, rollouts=8)
    assert PRESETS["quick"].variants == ("ttrl", "restrain", "no_pw", "gold")  # -PLW/-NRP: README, results
    assert PRESETS["full"].variants == VARIANTS
    with pytest.raises(ConfigError, match="variants"):
        RestrainConfig(variants=())
    with pytest.raises(ConfigError, match="variants"):
        RestrainConfig(variants=("ttrl", "ttrl"))
    with pytest.raises(ConfigError, match="rollouts"):
        RestrainConfig(rollouts=1)
    with pytest.raises(ConfigError, match="curve_size"):
        RestrainConfig(n_test=10, curve_size=20)
    with pytest.raises(ConfigError, match="clip_eps"):
        RestrainConfig(clip_eps=1.5)
    assert set(PRESETS) == {"smoke", "quick", "full", "smollm2"}
    assert PRESETS["full"].model == PRESETS["smollm2"].model == "smollm2"


def test_library_config_builds_for_any_value_the_library_path_accepts() -> None:
    """The task-size checks belong to the experiment: the library object has no task (issue 53)."""
    lib = RestrainTrainConfig(prompts_per_step=300)
    assert lib.prompts_per_step == 300
    with pytest.raises(ConfigError, match=r"prompts_per_step.*256 test prompts.*RestrainTrainConfig"):
        RestrainConfig(prompts_per_step=300)
    assert RestrainConfig(prompts_per_step=300, n_test=300, curve_size=128).prompts_per_step == 300
    with pytest.raises(ConfigError, match="'kappa' = 9: expected <= rollouts = 8"):
        RestrainTrainConfig(kappa=9, rollouts=8)  # a rule between the library's own fields stays there
    with pytest.raises(ConfigError, match="rollouts"):
        RestrainTrainConfig(rollouts=1)
    # the experiment is the library object plus its own fields, and each field is documented in one place
    train_fields = {f.name for f in dataclasses.fields(RestrainTrainConfig)}
    all_fields = {f.name for f in dataclasses.fields(RestrainConfig)}
    assert {"n_test", "n_train", "curve_size", "eval_samples", "tiny_hidden", "variants"} <= all_fields - train_fields
    assert not {"n_test", "n_train", "curve_size", "eval_samples", "tiny_hidden", "variants"} & train_fields
    assert isinstance(PRESETS["quick"], RestrainTrainConfig)


def test_trl_names_are_aliases_and_only_trls_grpo_loss_is_accepted() -> None:
    cfg = RestrainTrainConfig.from_trl(
        num_generations=16, beta=0.04, learning_rate=1e-6, epsilon=0.28, num_iterations=2,
        max_completion_length=64, max_grad_norm=0.5, max_steps=10, loss_type="grpo", scale_rewards="group",
        temperature=0.9, sigma=0.5,
    )  # fmt: skip
    assert (cfg.rollouts, cfg.kl_beta, cfg.lr, cfg.clip_eps, cfg.ppo_epochs) == (16, 0.04, 1e-6, 0.28, 2)
    assert (cfg.max_new_tokens, cfg.grad_clip, cfg.steps, cfg.temperature, cfg.sigma) == (64, 0.5, 10, 0.9, 0.5)
    assert (cfg.num_generations, cfg.beta) == (16, 0.04)
    assert set(TRL_NAMES.values()) <= {f.name for f in dataclasses.fields(RestrainTrainConfig)}
    assert RestrainTrainConfig.from_trl(scale_rewards=True) == RestrainTrainConfig()
    with pytest.raises(ConfigError, match="'loss_type' = 'dapo'"):
        RestrainTrainConfig.from_trl(loss_type="dapo")  # TRL's default normalises over all tokens: not ours
    with pytest.raises(ConfigError, match="scale_rewards"):
        RestrainTrainConfig.from_trl(scale_rewards="batch")
    with pytest.raises(ConfigError, match="'top_k' = 5"):
        RestrainTrainConfig.from_trl(top_k=5)
    with pytest.raises(ConfigError, match="rollouts"):
        RestrainTrainConfig.from_trl(num_generations=1)


def test_train_label_free_takes_more_prompts_per_step_than_the_experiments_test_set() -> None:
    import torch

    from iclr26_sequence_models.methods.restrain.train import train_label_free
    from iclr26_sequence_models.selfimprove.models import CharCodec, tiny_llama

    codec = CharCodec("0123456789+=")
    model = tiny_llama(codec.vocab_size, hidden_size=16, num_layers=1, num_heads=2, max_positions=32, seed=0)
    prompts = [f"{i % 10}+{i // 10 % 10}=" for i in range(300)]
    cfg = RestrainTrainConfig(steps=1, prompts_per_step=300, rollouts=2, kappa=0, max_new_tokens=1, lr=1e-2)
    before = [p.detach().clone() for p in model.parameters()]
    policy = train_label_free(model, codec, prompts, lambda t: t[:1] or None, variant="ttrl", cfg=cfg)
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))


def test_variant_settings_are_the_paper_reductions() -> None:
    from iclr26_sequence_models.methods.restrain.train import variant_settings

    cfg = RestrainConfig(k=0.9, sigma=0.2, kappa=3, delta=0.4)
    ttrl, u = variant_settings("ttrl", cfg)
    assert ttrl is not None and (ttrl.sigma, ttrl.k, ttrl.kappa, u) == (0.0, 1.0, 0, False)
    full, u = variant_settings("restrain", cfg)
    assert full is not None and (full.k, full.sigma, full.kappa, full.delta, u) == (0.9, 0.2, 3, 0.4, True)
    no_plw, _ = variant_settings("no_plw", cfg)
    assert no_plw is not None and no_plw.sigma == 0.0 and no_plw.kappa == 3
    no_nrp, _ = variant_settings("no_nrp", cfg)
    assert no_nrp is not None and no_nrp.kappa == 0 and no_nrp.sigma == 0.2
    assert variant_settings("no_pw", cfg) == (full, False)
    assert variant_settings("gold", cfg) == (None, False)


def _results(p: dict[str, float], base: float = 0.3, curves: dict[str, list[float]] | None = None) -> dict[str, Any]:
    curves = curves or {}
    variants = {
        v: {
            "final": {"pass@1": x, "maj@4": x, "parse_rate": 1.0},
            "curve": [{"step": i * 10, "pass@1": c} for i, c in enumerate(curves.get(v, [base, x]))],
        }
        for v, x in p.items()
    }
    return {
        "base": {"final": {"pass@1": base, "maj@4": base, "parse_rate": 1.0}},
        "variants": variants,
        "chance": 0.02,
        "settings": {
            "task": "t",
            "model": "tiny",
            "rollouts": 8,
            "steps": 10,
            "prompts_per_step": 4,
            "k": 1.0,
            "sigma": 0.3,
            "kappa": 3,
            "delta": 0.5,
        },
    }


def test_claims_hold_and_fail() -> None:
    good = _results(
        {"ttrl": 0.32, "restrain": 0.45, "no_plw": 0.2, "no_nrp": 0.4, "no_pw": 0.42, "gold": 0.6},
        curves={"ttrl": [0.3, 0.4, 0.32], "restrain": [0.3, 0.4, 0.45]},
    )
    assert [c.verdict for c in claims(good)] == ["holds"] * 5
    bad = _results(
        {"ttrl": 0.5, "restrain": 0.25, "no_plw": 0.45, "no_nrp": 0.4, "no_pw": 0.42, "gold": 0.31},
        curves={"ttrl": [0.3, 0.5], "restrain": [0.3, 0.4, 0.25]},
    )
    assert [c.verdict for c in claims(bad)] == ["fails"] * 5
    assert re.search(r"\| restrain +\| 0\.4500 ", report(good))
    # a win inside one run's noise (WIN_MARGIN 0.03, two standard errors of pass@1) does not hold
    close = _results({"ttrl": 0.43, "restrain": 0.45}, curves={"ttrl": [0.3, 0.4], "restrain": [0.3, 0.45]})
    assert [c.verdict for c in claims(close)][1:] == ["fails", "fails"]
    assert len(claims(_results({"restrain": 0.4}))) == 1  # only the variants that ran


def test_gap_claim_of_the_held_out_protocol() -> None:
    """Held-out protocol only: RESTRAIN must reach base + 0.5 (gold - base) + 0.03; without a measured gap (gold
    ahead of the base by less than the control margin) the claim cannot hold."""
    from iclr26_sequence_models.methods.restrain.claims import GAP_SHARE, WIN_MARGIN

    def gap_claim(restrain: float, gold: float, source: str = "train") -> Any:
        r = _results({"restrain": restrain, "gold": gold}, base=0.3)
        r["settings"]["prompt_source"] = source
        found = [c for c in claims(r) if "closes" in c.claim]
        return found[0] if found else None

    assert gap_claim(0.5, 0.6, source="test") is None  # test-time protocol: no held-out gap to close
    c = gap_claim(0.5, 0.6)
    assert GAP_SHARE == 0.5 and c.baseline == pytest.approx(0.45) and c.verdict == "holds"  # 0.5 >= 0.45 + 0.03
    assert gap_claim(0.47, 0.6).verdict == "fails"  # 0.47 < 0.45 + WIN_MARGIN
    assert 0.47 < 0.45 + WIN_MARGIN
    assert gap_claim(0.5, 0.31).verdict == "inconclusive"  # gold +0.01 over the base: no measured gap
    assert gap_claim(0.29, 0.6).verdict == "fails"  # below the base


def test_no_claim_holds_at_chance() -> None:
    flat = {v: 0.02 for v in ("ttrl", "restrain", "no_plw", "no_nrp", "no_pw", "gold")}
    assert not any(c.holds for c in claims(_results(flat, base=0.02)))


def test_restrain_smoke_saves_policies_and_no_degenerate_claim_holds(tmp_path: Path) -> None:
    """Smoke run (shared runner): curves, claims, the saved policies load back bit for bit, and no claim holds
    on the degenerate versions of its results (every arm equal, at chance, below chance, a collapsed policy)."""
    import torch

    from iclr26_sequence_models.methods.restrain.spec import SPEC
    from iclr26_shared.models import list_models
    from iclr26_shared.testing import Arms, assert_models_roundtrip, assert_no_claim_holds, smoke_run

    run, results = smoke_run(SPEC, tmp_path, variants=("ttrl", "restrain", "gold"))
    assert set(results["variants"]) == {"ttrl", "restrain", "gold"}
    smoke = PRESETS["smoke"]
    for r in results["variants"].values():
        assert [c["step"] for c in r["curve"]] == [0, 2, 3] and len(r["history"]) == smoke.steps
        assert 0.0 <= r["final"]["pass@1"] <= 1.0 and r["final"]["pass@1_se"] >= 0.0
        assert 0.0 <= r["acts"]["nrp_rate"] <= 1.0
    assert results["variants"]["ttrl"]["acts"]["minority_weight"] == 0.0  # TTRL: all weight on the majority
    top = results["variants"]["ttrl"]["acts"]["majority_weight"]
    assert top is None or top != top or top == pytest.approx(1.0, abs=1e-6)  # None / NaN: nothing parsed
    assert 0.0 <= results["variants"]["restrain"]["acts"]["multi_candidate_rate"] <= 1.0
    assert len(results["claims"]) == 4 and (run.path / "figures" / "pass1_curve.png").is_file()
    assert 0.0 < results["prompt_weights"]["min"] <= results["prompt_weights"]["max"] <= 1.0
    meta = list_models(run.path)
    assert set(meta) == {"ttrl", "restrain", "gold"} and meta["restrain"]["extra"]["codec"] == "CharCodec"
    ids = torch.tensor([[1, 5, 6, 7, 8]])
    assert_models_roundtrip(run, {v: (lambda m: m(input_ids=ids).logits) for v in meta})

    # the degenerate cases start from a result where every claim holds (the smoke run's tiny numbers tie)
    good = _results(
        {"ttrl": 0.32, "restrain": 0.45, "no_plw": 0.2, "no_nrp": 0.4, "no_pw": 0.42, "gold": 0.5},
        curves={"ttrl": [0.3, 0.4, 0.32], "restrain": [0.3, 0.4, 0.45]},
    )
    good["settings"]["prompt_source"] = "train"  # the held-out protocol's gap claim too
    assert all(c.holds for c in claims(good)) and len(claims(good)) == 6
    chance = good["chance"]
    arms = [
        Arms(
            ours=["variants/restrain/final/pass@1"],
            others=["base/final/pass@1", "variants/ttrl/final/pass@1", "variants/gold/final/pass@1"],
            trivial=chance,
            worse=0.0,
        ),
        Arms(ours=["variants/restrain/curve"], others=["variants/ttrl/curve"], trivial=chance, worse=0.0),
        Arms(
            ours=["variants/no_plw/final/pass@1"],
            others=["variants/no_nrp/final/pass@1", "variants/no_pw/final/pass@1"],
            trivial=chance,
        ),
    ]
    collapsed = copy.deepcopy(good)  # RESTRAIN's policy collapsed to no parsable answer at all
    collapsed["variants"]["restrain"]["final"]["pass@1"] = 0.0
    for c in collapsed["variants"]["restrain"]["curve"][1:]:
        c["pass@1"] = 0.0
    gold_worse = copy.deepcopy(good)  # the gold-label control loses to the base model
    gold_worse["variants"]["gold"]["final"]["pass@1"] = good["base"]["final"]["pass@1"] - 0.05
    assert_no_claim_holds(
        SPEC,
        good,
        arms,
        extra_cases={"collapsed RESTRAIN policy": collapsed, "gold control below the base": gold_worse},
    )


def test_restrain_bad_flag_exits_2(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["restrain", "--preset", "smoke", "--kappa", "99", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "kappa" in res.err


def test_smoke_config_is_cheap() -> None:
    s = PRESETS["smoke"]
    assert s.steps * s.prompts_per_step * s.rollouts <= 64 and dataclasses.replace(s, steps=1).steps == 1


@pytest.mark.slow
def test_restrain_under_torchrun_two_processes(tmp_path: Path) -> None:
    """``torchrun --nproc-per-node 2`` (gloo): each rank takes half of a step's prompts; rank 0 writes."""
    import os
    import shutil
    import subprocess

    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not on PATH")
    args = ["restrain", "--preset", "smoke", "--device", "cpu", "--quiet", "--variants", "ttrl", "restrain"]
    out = subprocess.run(
        [
            torchrun,
            "--standalone",
            "--nproc-per-node",
            "2",
            "-m",
            "iclr26_sequence_models",
            *args,
            "--out-dir",
            str(tmp_path),
        ],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (run_path,) = (tmp_path / "restrain").iterdir()
    assert set(assert_valid_run_dir(run_path)["variants"]) == {"ttrl", "restrain"}
