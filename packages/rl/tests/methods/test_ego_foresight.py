"""Ego-Foresight: decoder shapes, the rollout uses the given actions, loss, configs, metrics, claims, runs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr26_rl import cli
from iclr26_rl.data import Batch
from iclr26_rl.methods.ego_foresight.claims import claims
from iclr26_rl.methods.ego_foresight.config import PRESETS, EgoForesightConfig
from iclr26_rl.methods.ego_foresight.metrics import efficiency_normalised_score, ens_details, mean_ci
from iclr26_rl.methods.ego_foresight.model import EgoForesightHead, FrameDecoder
from iclr26_rl.methods.ego_foresight.spec import SPEC
from iclr26_shared import load_model
from iclr26_shared.errors import ConfigError
from iclr26_shared.runs import RunDir
from iclr26_shared.testing import Arms, assert_models_roundtrip, assert_no_claim_holds, run_cli, smoke_run


@pytest.mark.parametrize(("size", "sides"), [(84, [5, 10, 21, 42, 84]), (64, [4, 8, 16, 32, 64])])
def test_decoder_upsampling_path(size: int, sides: list[int]) -> None:
    dec = FrameDecoder(24, size, channels=4)
    seen = []
    for m in dec.net:
        if isinstance(m, torch.nn.ConvTranspose2d):
            m.register_forward_hook(lambda _m, _i, out: seen.append(out.shape[-1]))
    out = dec(torch.randn(2, 24))
    assert seen == sides and out.shape == (2, 3, size, size)
    assert 0 <= out.min() and out.max() <= 1


def _head() -> EgoForesightHead:
    torch.manual_seed(0)
    head = EgoForesightHead(40, 6, 2, frame_stack=2, horizon=4, image_size=64, rollout_hidden=(16,), decoder_channels=4)
    for p in head.decoder.parameters():  # DCGAN init (std 0.02) decodes ~0.5 everywhere; widen it
        if p.dim() > 1:
            torch.nn.init.normal_(p, 0.0, 0.3)
    return head.eval()  # BatchNorm in eval mode: samples do not interact


def test_rollout_uses_the_given_actions_causally() -> None:
    head = _head()
    h = torch.randn(3, 40)
    actions = torch.randn(3, 4, 2)
    pred = head.predict(h, actions)
    assert pred.shape == (3, 4, 3, 64, 64)
    changed = actions.clone()
    changed[0, 2] += 1.0
    pred2 = head.predict(h, changed)
    assert torch.equal(pred[0, :2], pred2[0, :2])  # frames before the changed action are unchanged
    assert not torch.allclose(pred[0, 2:], pred2[0, 2:])  # frames from it on change
    assert torch.equal(pred[1:], pred2[1:])  # other samples untouched


def test_scene_part_of_another_sample_does_not_change_the_agent_part() -> None:
    head = _head()
    h = torch.randn(3, 40)
    actions = torch.randn(3, 4, 2)
    h2 = h.clone()
    h2[1, 6:] += 5.0  # the scene part of sample 1
    h2[0, 6:] += 5.0  # ... and the scene part of sample 0 itself
    a1 = head.rollout(head.split(h)[0], actions)
    a2 = head.rollout(head.split(h2)[0], actions)
    assert torch.equal(a1, a2)  # the agent part never reads the scene part
    p1, p2 = head.predict(h, actions), head.predict(h2, actions)
    assert torch.equal(p1[2], p2[2])  # sample 2 untouched
    assert not torch.allclose(p1[0], p2[0])  # its own scene part does change its frame


def test_ef_loss_matches_formula_and_reaches_the_encoder() -> None:
    head = _head().train()
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 255, (2, 6, 3, 64, 64), dtype=np.uint8)
    acts = rng.uniform(-1, 1, (2, 6, 2)).astype(np.float32)
    batch = Batch(
        obs=frames[:, :2].reshape(2, 6, 64, 64),
        action=acts[:, 2],
        reward=np.zeros((2, 1), np.float32),
        discount=np.ones((2, 1), np.float32),
        next_obs=frames[:, :2].reshape(2, 6, 64, 64),
        window_frames=frames,
        window_actions=acts,
    )
    h = torch.randn(2, 40, requires_grad=True)
    shifts = torch.zeros(2, 2, dtype=torch.long)  # shift (0, 0): crop at the top-left of the padded frame
    torch.manual_seed(5)
    loss, metrics = head.loss(h, batch, shifts)
    torch.manual_seed(5)
    j = int(torch.randint(2, 6, ()).item())
    assert metrics["ef_k"] == j - 1
    target = torch.nn.functional.pad(torch.as_tensor(frames[:, j]).float(), (4, 4, 4, 4), mode="replicate")
    target = target[:, :, :64, :64] / 255
    ha, hs = head.split(h)
    pred = head.decode(head.rollout(ha, torch.as_tensor(acts[:, 2 : j + 1]))[:, -1], hs)
    expected = ((pred - target) ** 2).sum(dim=(1, 2, 3)).mean()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    loss.backward()
    assert h.grad is not None and h.grad.abs().sum() > 0


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"env": "NoSuchEnv-v5"}, "env"),
        ({"horizon": 0}, "horizon"),
        ({"agent_dim": 2048}, "agent_dim"),
        ({"agent_dim": 0}, "agent_dim"),
        ({"image_size": 70}, "image_size"),
        ({"agent": "ppo"}, "agent"),
        ({"train_seeds": ()}, "train_seeds"),
        ({"train_seeds": (1, 1)}, "train_seeds"),
        ({"lr": 0.0}, "lr"),
        ({"critic_tau": 0.0}, "critic_tau"),
        ({"rollout_hidden": ()}, "rollout_hidden"),
        ({"horizon": 30}, "horizon"),  # window longer than a 25-step Reacher episode
        ({"beta": -1.0}, "beta"),
    ],
)
def test_bad_configs_raise_config_error(changes: dict, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        EgoForesightConfig(**changes)
    assert err.value.field == field


def test_cli_bad_config_exits_2() -> None:
    res = run_cli(cli.main, ["ego-foresight", "--preset", "smoke", "--horizon", "0", "--device", "cpu"])
    assert res.code == 2 and "horizon" in res.err


def test_presets_and_config_properties() -> None:
    full = PRESETS["full"]
    assert (full.repr_dim, full.agent_dim, full.horizon, full.beta, full.babbling_steps) == (2048, 32, 10, 1.0, 12500)
    assert full.steps * full.action_repeat == 2_500_000 and full.window == 13
    assert full.episode_steps == 25 and full.jobs[0] == ("drqv2", 1) and full.baseline_encoder == "pool"
    assert set(SPEC.presets) >= {"smoke", "quick", "full"}


def test_mean_ci_and_ens() -> None:
    mean, lo, hi = mean_ci(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert mean.tolist() == [2.0, 3.0] and lo[0] == pytest.approx(2 - 12.706) and hi[1] == pytest.approx(3 + 12.706)
    ens = efficiency_normalised_score({"fast": [0, 9, 10, 10], "slow": [0, 2, 6, 10]})
    # t_q: fast reaches 95 % of its gain at index 2, 90 % and 85 % at index 1 (slow only at 3)
    # -> scores at t = 2, 1, 1: fast (1.0 + 0.9 + 0.9) / 3, slow (0.6 + 0.2 + 0.2) / 3
    assert ens["fast"] == pytest.approx(2.8 / 3) and ens["slow"] == pytest.approx(1.0 / 3)
    flat = efficiency_normalised_score({"a": [1, 1], "b": [1, 1]})
    assert all(np.isnan(v) for v in flat.values())  # no curve learns: undefined


def test_ens_steps_at_a_level_both_curves_reach_and_ignores_curves_that_learn_nothing() -> None:
    """The issue's case: EF learns 0 -> 100, DrQ-v2 bumps to 2 and stays near 0. The old rule took the
    step from DrQ-v2's own peak (step 1) and scored EF 0.01 vs 0.02; a curve that learns nothing (gain
    2 <= 10 % of the range) now sets no step, so the step is where EF reaches 95/90/85 of 100."""
    d = ens_details({"ef": [0, 1, 100, 100], "drqv2": [0, 2, 1, 1]})
    assert d["learners"] == ["ef"] and d["steps"] == [2, 2, 2]
    assert d["ens"]["ef"] == pytest.approx(1.0) and d["ens"]["drqv2"] == pytest.approx(0.01)
    # both learn: the levels are fractions of the lower peak (both reach it), the step the first to get there
    d = ens_details({"a": [0, 4, 8, 8], "b": [0, 1, 6, 10]})
    assert d["levels"] == pytest.approx([7.6, 7.2, 6.8]) and d["steps"] == [2, 2, 2]
    assert d["ens"] == pytest.approx({"a": 0.8, "b": 0.6}) and d["chance"] == 0.0
    ens_claim = claims(_results(-10.0, -20.0, 1.0, 0.5, 0.7))[1]
    assert ens_claim.chance == 0.0 and ens_claim.verdict == "holds"


def test_ens_claim_fails_against_a_baseline_that_learns_first() -> None:
    res = _results(-10.0, -20.0, 1.0, 0.5, 0.7)
    res["agents"]["drqv2-ef"]["mean_return"] = [-30.0, -28.0, -10.0]
    res["agents"]["drqv2"]["mean_return"] = [-30.0, -20.0, -20.0]
    assert claims(res)[1].verdict == "fails"


def _results(
    ef: float,
    base: float,
    sem: float,
    ef_mse: float,
    rand_mse: float,
    improved: bool = True,
    mean_mse: float = 0.8,
    colour_mse: float = 0.9,
) -> dict:
    """Learning curves from the untrained level -30: EF jumps to its final return at once, DrQ-v2 gets there
    in two evaluations (``improved=False``: both flat at their final returns)."""
    curves = (
        {"drqv2-ef": [-30.0, ef, ef], "drqv2": [-30.0, (base - 30.0) / 2, base]}
        if improved
        else {"drqv2-ef": [ef] * 3, "drqv2": [base] * 3}
    )
    return {
        "env": "Reacher-v5",
        "agents": {
            name: {"final_return_sem": sem, "final_return": final, "mean_return": curves[name]}
            for name, final in (("drqv2", base), ("drqv2-ef", ef))
        },
        "prediction": {
            "ef_agent_mse": ef_mse,
            "copy_agent_mse": 1.0,
            "rand_agent_mse": rand_mse,
            "mean_agent_mse": mean_mse,
            "colour_agent_mse": colour_mse,
        },
    }


def test_claims_need_more_than_noise() -> None:
    verdicts = [c.verdict for c in claims(_results(-10.0, -20.0, 1.0, 0.5, 0.7))]
    assert verdicts == ["holds", "holds", "holds", "holds"]
    out = claims(_results(-19.0, -20.0, 1.0, 0.5, 0.505, improved=False))
    assert out[2].baseline == 0.8  # the best no-skill predictor: the mean frame beats copy-last (1.0)
    # flat curves: no agent beat the untrained level (inconclusive), ENS undefined; 2b is a 1 % tie
    assert [c.verdict for c in out] == ["inconclusive", "inconclusive", "holds", "fails"]
    # learning curves, but a gap (1) below the std. error of the difference (1.41)
    assert claims(_results(-19.0, -20.0, 1.0, 0.5, 0.7))[0].verdict == "fails"


def test_claims_at_chance_do_not_hold() -> None:
    """Both agents at or below the untrained policy, equal ENS, every predictor at the mean frame's error."""
    res = _results(-40.0, -40.0, 0.0, 0.8, 0.8, mean_mse=0.8)  # both curves fall from -30: neither learns
    verdicts = [c.verdict for c in claims(res)]
    assert "holds" not in verdicts
    assert verdicts[0] == "fails"  # ours below the untrained policy's return (-30): worse than chance
    assert verdicts[1] == "inconclusive"  # no curve learns: the ENS is undefined
    assert verdicts[2:] == ["fails", "inconclusive"]  # 2a is a test against the blind guesses; 2b at chance


def test_action_blind_head_worse_than_the_mean_frame_fails() -> None:
    """A head that draws a blur (worse than the mean frame) shows nothing about actions even if ours < random:
    ours worse than the trivial answer fails the claim (strict verdicts)."""
    verdicts = [c.verdict for c in claims(_results(-10.0, -20.0, 1.0, 0.9, 0.95, mean_mse=0.85))]
    assert verdicts[2:] == ["fails", "fails"]


def test_a_grey_blur_that_only_beats_copy_and_mean_frame_does_not_hold() -> None:
    """On the agent region a frame in the agent's mean colour is the best blind guess (an untrained decoder's
    grey is close to it): beating copy-last and the mean frame alone is not enough."""
    out = claims(_results(-10.0, -20.0, 1.0, 0.5, 0.5, mean_mse=0.8, colour_mse=0.45))
    assert out[2].baseline == 0.45
    assert [c.verdict for c in out[2:]] == ["fails", "fails"]


def test_quick_claims_are_the_prediction_claims() -> None:
    """Without the baseline agent (quick trains only drqv2-ef) the return claims are not made."""
    res = _results(-10.0, -20.0, 1.0, 0.5, 0.7)
    del res["agents"]["drqv2"]
    out = claims(res)
    assert [c.verdict for c in out] == ["holds", "holds"] and all("predict" in c.claim for c in out)
    assert PRESETS["quick"].agents == ("drqv2-ef",) and PRESETS["full"].agents == ("drqv2", "drqv2-ef")
    assert SPEC.gpu_presets == ("full",)


def test_claims_without_the_ef_agent_are_not_made() -> None:
    assert claims({"env": "Reacher-v5", "agents": {"drqv2": {"final_return": 1.0, "ens": 0.5}}}) == []


def test_smoke_run_writes_a_valid_run_directory_and_saves_the_agents(tmp_path: Path) -> None:
    from iclr26_rl.agents.drqv2 import DrQV2Policy

    run, results = smoke_run(SPEC, tmp_path)
    run_dir = run.path
    assert set(results["agents"]) == {"drqv2", "drqv2-ef"}
    assert len(results["claims"]) == 4
    assert results["agents"]["drqv2"]["eval_steps"] == [0, 40, 80]
    for fig in ("learning_curves", "prediction_error", "ef_prediction", "eval_episode_drqv2"):
        assert (run_dir / "figures" / f"{fig}.png").is_file()
    pred = results["prediction"]
    assert min(pred["copy_agent_mse"], pred["mean_agent_mse"], pred["colour_agent_mse"]) > 0
    assert pred["action_sensitivity"] >= 0 and pred["agent_part_sensitivity"] >= 0
    # the trained agents load back and act bit for bit the same
    obs = torch.randint(0, 256, (2, 9, 64, 64), dtype=torch.uint8)
    assert_models_roundtrip(run, {"drqv2-seed1": obs, "drqv2-ef-seed1": obs})
    policy = load_model(run_dir, "drqv2-ef-seed1")
    assert isinstance(policy, DrQV2Policy) and policy.aux is not None and policy.encoder.kind == "pool"
    assert load_model(run_dir, "drqv2-seed1").encoder.kind == "pool"  # the baseline's encoder, by default
    _assert_no_claim_holds_on(results)


def _assert_no_claim_holds_on(results: dict) -> None:
    """The shared cases on the four claims' arms (learning curves and final returns, prediction errors),
    plus the method's own: an EF curve that learns nothing (flat at the untrained level, while DrQ-v2
    learns), and an EF head no better than the agent's mean colour (a blur)."""
    curves = [f"agents/{a}/mean_return" for a in ("drqv2-ef", "drqv2")]
    untrained = max(results["agents"][a]["mean_return"][0] for a in ("drqv2-ef", "drqv2"))
    arms = [
        Arms(ours=[curves[0]], others=[curves[1]], trivial=untrained, worse=untrained - 10.0),
        Arms(
            ours=["agents/drqv2-ef/final_return"],
            others=["agents/drqv2/final_return"],
            trivial=untrained,
            worse=untrained - 10.0,
        ),
        Arms(
            ours=["prediction/ef_agent_mse"],
            others=["prediction/rand_agent_mse"],
            trivial=results["prediction"]["mean_agent_mse"],
            worse=2 * results["prediction"]["mean_agent_mse"],
        ),
    ]
    flat = json.loads(json.dumps(results))
    base = flat["agents"]["drqv2"]
    base["mean_return"] = [untrained + 10.0 * i for i in range(len(base["mean_return"]))]
    base["final_return"] = base["mean_return"][-1]
    flat["agents"]["drqv2-ef"]["mean_return"] = [untrained] * len(base["mean_return"])
    flat["agents"]["drqv2-ef"]["final_return"] = untrained
    blur = json.loads(json.dumps(results))
    blur["prediction"]["ef_agent_mse"] = blur["prediction"]["colour_agent_mse"]
    extra = {"EF learns nothing": flat, "EF head no better than the agent's mean colour": blur}
    assert_no_claim_holds(claims, results, arms, extra_cases=extra)


def test_no_claim_holds_on_degenerate_hand_built_results() -> None:
    _assert_no_claim_holds_on(_results(-10.0, -20.0, 1.0, 0.5, 0.7))


def test_resume_after_crash_continues_from_the_saved_step(tmp_path: Path) -> None:
    from iclr26_shared.runner import CommonFlags, execute

    cfg = dataclasses.replace(PRESETS["smoke"], agent="drqv2", steps=60, checkpoint_every=25, eval_every=30)
    crash = dataclasses.replace(cfg, crash_at_step=55)
    with pytest.raises(RuntimeError, match="crash_at_step"):
        execute(SPEC, crash, CommonFlags(device="cpu", out_dir=tmp_path, quiet=True))
    crashed = next((tmp_path / "ego-foresight").iterdir())
    run = RunDir(crashed, method=SPEC.name, config=cfg, seed=0, device=torch.device("cpu"), quiet=True)
    assert [s for s, _ in run.checkpoints()] == [25, 50]
    results = SPEC.run(cfg, run)
    rows = run.read_metrics()
    evals = [r["step"] for r in rows if r["kind"] == "eval"]
    trains = [r["step"] for r in rows if r["kind"] == "train"]
    assert evals == [0, 30, 60]  # each evaluation logged exactly once across the crash
    assert trains == [25, 50, 60]
    assert results["agents"]["drqv2"]["eval_steps"] == [0, 30, 60]
    assert json.loads(json.dumps(results["jobs"][0]["eval_returns"]))  # plain JSON values


@pytest.mark.slow
def test_resume_is_bit_for_bit(tmp_path: Path) -> None:
    from iclr26_shared.runner import CommonFlags, execute

    cfg = dataclasses.replace(PRESETS["smoke"], agent="drqv2-ef", steps=60, checkpoint_every=25, eval_every=30)
    _, clean, _ = execute(SPEC, cfg, CommonFlags(device="cpu", out_dir=tmp_path / "a", quiet=True))
    with pytest.raises(RuntimeError, match="crash_at_step"):
        execute(SPEC, dataclasses.replace(cfg, crash_at_step=55), CommonFlags(device="cpu", out_dir=tmp_path / "b"))
    crashed = next((tmp_path / "b" / "ego-foresight").iterdir())
    run = RunDir(crashed, method=SPEC.name, config=cfg, seed=0, device=torch.device("cpu"), quiet=True)
    resumed = SPEC.run(cfg, run)
    assert resumed["jobs"][0]["eval_returns"] == clean["jobs"][0]["eval_returns"]
    assert resumed["prediction"]["ef_agent_mse"] == clean["prediction"]["ef_agent_mse"]


def _dry_run(preset: str) -> dict:
    from iclr26_shared.dryrun import dry_run

    return dry_run(SPEC, SPEC.preset(preset), "cpu")


def test_dry_run_smoke_builds_both_agents_and_steps() -> None:
    """Parameter count of both agents equals building them by hand; one step each gives finite losses."""
    from iclr26_rl.methods.ego_foresight.train import build_agent

    out = _dry_run("smoke")
    cfg = PRESETS["smoke"]
    expect = 0
    for name in cfg.agents:
        a = build_agent(cfg, name, (3 * cfg.frame_stack, cfg.image_size, cfg.image_size), 2, torch.device("cpu"))
        nets = [a.encoder, a.actor, a.critic, *(() if a.aux is None else (a.aux,))]
        expect += sum(p.numel() for m in nets for p in m.parameters())
    assert out["parameters"] == expect and np.isfinite(out["train_loss"])
    assert out["drqv2-ef/train_loss"] > out["drqv2/train_loss"] > 0  # the EF agent adds the EF loss


@pytest.mark.slow
def test_dry_run_full() -> None:
    out = _dry_run("full")
    assert out["parameters"] > 1_000_000 and np.isfinite(out["train_loss"])


def test_window_loss_on_a_users_own_encoder_equals_the_agent_hook() -> None:
    """window_loss on plain tensors (any encoder, any replay) is the agent's Batch loss; it trains the
    user's encoder; windows the head cannot use give one-line errors."""
    head = _head().train()
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 255, (2, 6, 3, 64, 64), dtype=np.uint8)
    acts = rng.uniform(-1, 1, (2, 6, 2)).astype(np.float32)
    proj = torch.nn.Linear(2 * 3 * 64 * 64, 40)
    h = proj(torch.as_tensor(frames[:, :2]).float().flatten(1) / 255)
    batch = Batch(
        obs=frames[:, :2].reshape(2, 6, 64, 64),
        action=acts[:, 2],
        reward=np.zeros((2, 1), np.float32),
        discount=np.ones((2, 1), np.float32),
        next_obs=frames[:, :2].reshape(2, 6, 64, 64),
        window_frames=frames,
        window_actions=acts,
    )
    shifts = torch.zeros(2, 2, dtype=torch.long)
    torch.manual_seed(3)
    via_batch, _ = head.loss(h, batch, shifts)
    torch.manual_seed(3)
    own, metrics = head.window_loss(h, torch.as_tensor(frames), torch.as_tensor(acts), shifts)
    assert torch.equal(own, via_batch) and 1 <= metrics["ef_k"] <= 4
    hwc = np.ascontiguousarray(frames.transpose(0, 1, 3, 4, 2))  # [B, T, S, S, 3], as gymnasium renders
    for layout in (hwc, torch.as_tensor(hwc)):
        torch.manual_seed(3)
        assert torch.equal(head.window_loss(h, layout, acts, shifts)[0], via_batch)
    own.backward()
    assert proj.weight.grad is not None and proj.weight.grad.abs().sum() > 0
    bad = [
        (frames[:, :, :, :48, :48], acts, "48x48 frames, this head decodes 64x64"),
        (frames[:, :5], acts[:, :5], "need frame_stack \\+ horizon = 6"),
        (frames, acts[:, :, :1], "window_actions"),
    ]
    for f, a, match in bad:
        with pytest.raises(ValueError, match=match) as err:
            head.window_loss(h, f, a)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="image_size: the Ego-Foresight decoder needs frames of side >= 16, got 12"):
        EgoForesightHead(40, 6, 2, 2, 4, image_size=12)


@pytest.mark.parametrize("size", [16, 48, 64, 70, 84, 96, 127])
def test_decoder_produces_every_frame_size_the_encoder_takes(size: int) -> None:
    from iclr26_rl.methods.ego_foresight.model import FrameDecoder, decoder_kernels

    assert decoder_kernels(64) == (4, 4, 4, 4, 4) and decoder_kernels(84) == (5, 4, 5, 4, 4)  # the paper's
    out = FrameDecoder(12, size, channels=4).eval()(torch.randn(2, 12))
    assert out.shape == (2, 3, size, size)
    head = EgoForesightHead(40, 6, 2, 2, 4, image_size=size, rollout_hidden=(16,), decoder_channels=4)
    h = torch.randn(3, 40)
    frames = torch.randint(0, 256, (3, 6, size, size, 3), dtype=torch.uint8)  # HWC, as gymnasium renders
    loss, _ = head.window_loss(h, frames, torch.zeros(3, 6, 2))
    assert loss.ndim == 0 and torch.isfinite(loss)


def test_report_tables_render_an_undefined_ens() -> None:
    from iclr26_rl.methods.ego_foresight.claims import report

    res = _results(-10.0, -20.0, 1.0, 0.5, 0.7)
    for a in res["agents"].values():
        a.update(final_return_per_seed=[a["final_return"]], mean_return_over_curve=-20.0, ens=None)
        a.update(env_steps_per_s=10.0, updates_per_s=1.0)
    cols = ("ef_agent", "rand_agent", "copy_agent", "mean_agent", "colour_agent", "ef_full", "copy_full")
    res["prediction"]["per_horizon"] = {c: [0.1, 0.2] for c in cols}
    out = report({**res, "steps": 10, "train_seeds": [1]})
    assert "| 2 " in out  # one row per horizon; missing columns shown as "-"
    row = next(line for line in out.splitlines() if line.startswith("| drqv2-ef"))
    assert "n/a" in row and row.count("|") == 8


def test_curve_bands_draws_what_the_title_says():
    from iclr26_rl.methods.ego_foresight.train import curve_bands

    summary = {"agents": {"drqv2-ef": {"ci_low": [0.0, 1.0], "ci_high": [2.0, 3.0]}}}
    one = curve_bands(dataclasses.replace(PRESETS["quick"], train_seeds=(1,)), summary)
    assert one["bands"] is None and "1 seed" in one["title"] and "CI" not in one["title"]
    three = curve_bands(dataclasses.replace(PRESETS["quick"], train_seeds=(1, 2, 3)), summary)
    assert three["bands"] == {"drqv2-ef": ([0.0, 1.0], [2.0, 3.0])} and "95% t-CI band over 3 seeds" in three["title"]
