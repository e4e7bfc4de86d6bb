"""Config validation: bad values raise ConfigError naming the (nested) field; every preset x task resolves to
the pinned settings; the nested task configs are CLI flags with real defaults."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
from typing import Any

import pytest

from iclr26_sequence_models.methods.selective_rope.config import PRESETS, TASKS, SelectiveRopeConfig
from iclr26_sequence_models.methods.selective_rope.spec import SPEC
from iclr26_shared.cli import parse_method_args
from iclr26_shared.config import config_from_dict, config_to_dict
from iclr26_shared.errors import ConfigError, UsageError

_ROW = (
    "layer",
    "hidden_size",
    "num_layers",
    "num_heads",
    "expand_k",
    "use_short_conv",
    "steps",
    "batch_size",
    "lr",
    "seq_len",
    "eval_len",
    "eval_size",
    "eval_every",
    "vocab_size",
    "mqar_kv_pairs",
    "copy_min_len",
    "copy_max_len",
    "copy_eval_lengths",
)
_C = (32, 64, 128)  # copy_eval_lengths of the tasks that do not copy (the old shared table's default)
#: ``TaskSettings`` of every preset x task before the nested task configs (config.py of commit 81b805f,
#: unchanged until 16558c9): computed by hand from that file as
#: ``{**_COMMON, **_BASE[task], **_SCALES[scale][task]}`` (and its ``PAPER_SELECTIVE`` switches below), and
#: checked against that code once on this machine.
PINNED: dict[tuple[str, str], tuple[Any, ...]] = {
    ("smoke", "state"): ("gla", 32, 1, 2, 1.0, True, 6, 8, 5e-4, 32, 64, 16, 0, 0, 8, 2, 64, _C),
    ("smoke", "copy"): ("gla", 32, 1, 2, 1.0, False, 6, 4, 2e-3, 48, 128, 8, 0, 0, 8, 2, 8, (4, 16)),
    ("smoke", "mqar"): ("gla", 32, 2, 2, 0.5, True, 6, 8, 3e-3, 32, 32, 16, 0, 64, 4, 2, 64, _C),
    ("smoke", "lm"): ("gla", 32, 1, 2, 0.5, True, 6, 4, 2e-3, 64, 128, 4, 0, 256, 8, 2, 64, _C),
    ("quick", "state"): ("gla", 64, 1, 4, 1.0, True, 400, 32, 1e-2, 64, 256, 128, 0, 0, 8, 2, 64, _C),
    ("quick", "copy"): (
        "gla",
        64,
        2,
        4,
        1.0,
        False,
        300,
        16,
        2e-3,
        128,
        128,
        64,
        0,
        0,
        8,
        2,
        16,
        (8, 16, 24, 32, 48, 64),
    ),
    ("quick", "mqar"): ("gla", 64, 2, 4, 0.5, True, 300, 32, 1e-2, 32, 32, 512, 0, 64, 4, 2, 64, _C),
    ("quick", "lm"): ("gla", 128, 2, 4, 0.5, True, 250, 16, 2e-3, 128, 128, 64, 0, 256, 8, 2, 64, _C),
    # long (issue 53): quick's models at the budgets where the effect can show; a new preset, pinned by hand
    ("long", "state"): ("gla", 64, 1, 4, 1.0, True, 1000, 128, 1e-2, 64, 256, 128, 0, 0, 8, 2, 64, _C),
    ("long", "copy"): (
        *("gla", 64, 2, 4, 1.0, False, 2000, 16, 2e-3, 128, 128, 64, 0, 0, 8, 2, 16),
        (8, 16, 24, 32, 48, 64),
    ),
    ("long", "mqar"): ("gla", 64, 2, 4, 0.5, True, 300, 32, 1e-2, 32, 32, 512, 0, 64, 4, 2, 64, _C),
    ("long", "lm"): ("gla", 128, 2, 1, 0.5, True, 1000, 16, 2e-3, 128, 128, 512, 0, 256, 8, 2, 64, _C),
    ("full", "state"): ("gla", 384, 1, 12, 1.0, True, 10_000, 64, 5e-4, 128, 512, 1000, 0, 0, 8, 2, 64, _C),
    ("full", "copy"): (
        *("gla", 512, 4, 16, 1.0, False, 5000, 32, 2e-3, 420, 128, 128, 0, 0, 8, 2, 64),
        (16, 32, 64, 128, 256, 512),
    ),
    ("full", "mqar"): ("gla", 128, 2, 4, 0.5, True, 20_000, 64, 3e-3, 256, 256, 3000, 0, 8192, 16, 2, 64, _C),
    ("full", "lm"): ("gla", 512, 8, 4, 0.5, True, 20_000, 32, 1e-3, 1024, 128, 512, 0, 256, 8, 2, 64, _C),
}
_SHARED = {"phi_proj_rank": 32, "gate_parametrization": "standard", "temp_grad": False}
#: The Selective RoPE options per task (``PAPER_SELECTIVE`` of that config.py + its defaults low-rank φ,
#: no conv activation, + the shared options), the same at every preset.
PINNED_SELECTIVE: dict[str, dict[str, Any]] = {
    "state": dict(
        temp_type="rope", temp_theta=1.0, temp_max=1.0, use_bias=True, use_gate=False, skip_conv=False,
        phi_parametrization="low-rank", conv_act=None, **_SHARED,
    ),
    "copy": dict(
        temp_type="rfa", temp_theta=0.9999, temp_max=0.25, use_bias=False, use_gate=False, skip_conv=True,
        phi_parametrization="low-rank", conv_act=None, **_SHARED,
    ),
    "mqar": dict(
        temp_type="rope", temp_theta=500_000.0, temp_max=1.0, use_bias=False, use_gate=False, skip_conv=False,
        phi_parametrization="low-rank", conv_act=None, **_SHARED,
    ),
    "lm": dict(
        temp_type="rope", temp_theta=500_000.0, temp_max=1.0, use_bias=False, use_gate=True, skip_conv=False,
        phi_parametrization="full-rank", conv_act="silu", **_SHARED,
    ),
}  # fmt: skip


#: Optimiser and protocol of each task in every preset (issue 53): state and copy take the official trainers'
#: settings (configs/state_tracking/trainer/trainer.yaml: AdamW β2 0.999, weight decay 1e-6, no clipping,
#: cosine from step 0, best validation checkpoint, max_val_acc 0.99; configs/copying/trainer/trainer.yaml:
#: β2 0.999, weight decay 0.1, clip 1.0, linear schedule with 10 % warm-up); MQAR and LM keep the top-level
#: AdamW (0.9, 0.95), decay 0.1, clip 1, 10 % warm-up, cosine, final model.
_TOP = {"beta2": 0.95, "weight_decay": 0.1, "grad_clip": 1.0, "warmup_frac": 0.1, "schedule": "cosine"}
PINNED_TRAINING: dict[str, dict[str, Any]] = {
    "state": {"beta2": 0.999, "weight_decay": 1e-6, "grad_clip": 0.0, "warmup_frac": 0.0, "schedule": "cosine",
              "select_best": True, "stop_at": 0.99},
    "copy": {"beta2": 0.999, "weight_decay": 0.1, "grad_clip": 1.0, "warmup_frac": 0.1, "schedule": "linear",
             "select_best": True, "stop_at": 0.0},
    "mqar": {**_TOP, "select_best": False, "stop_at": 0.0},
    "lm": {**_TOP, "select_best": False, "stop_at": 0.0},
}  # fmt: skip


@pytest.mark.parametrize(("preset", "task"), sorted(PINNED))
def test_presets_resolve_to_the_pinned_settings(preset: str, task: str) -> None:
    got = PRESETS[preset].settings(task).to_dict()
    want = {"task": task, **dict(zip(_ROW, PINNED[(preset, task)], strict=True))}
    want.update(group="S2", selective=PINNED_SELECTIVE[task], training=PINNED_TRAINING[task])
    assert got == want
    assert all(type(got[k]) is type(v) for k, v in want.items()), "types differ (e.g. an int where a float was)"


def test_long_preset_meets_the_issue_budgets_without_running() -> None:
    """The overnight tier (``--preset long``), validated from its config alone: S2 at batch 128 for >= 1000
    steps with the official protocol (best validation checkpoint, stop at 0.99) over NoPE, RoPE and
    Selective RoPE; copying at 2000 steps over NoPE, RoPE and Selective RoPE's bias x gate sweep, with test
    lengths beyond training; the LM at key head dim >= 64, >= 1000 steps, >= 512 evaluation windows, RoPE and
    Selective RoPE at 2 learning rates each; the same models as quick (only budgets grow); every task meets
    LONG_BUDGET and quick meets none of the three."""
    from iclr26_sequence_models.methods.selective_rope.config import LONG_BUDGET, budget_shortfall, key_head_dim

    long, quick = PRESETS["long"], PRESETS["quick"]
    assert set(PRESETS) == {"smoke", "quick", "long", "full"}
    state, copy, lm = long.settings("state"), long.settings("copy"), long.settings("lm")
    assert (state.batch_size, state.steps) == (128, 1000)
    assert state.training["select_best"] and state.training["stop_at"] == 0.99 and state.eval_len == 4 * state.seq_len
    assert long.positions_of("state") == ("nope", "rope", "selective") and long.group == "S2"
    assert copy.steps == 2000 and copy.training["select_best"]
    assert long.positions_of("copy") == ("nope", "rope", "selective") and long.bias_gate_sweep == ("copy",)
    assert len(long.selective_variants("copy")) == 4 and max(copy.copy_eval_lengths) > copy.copy_max_len
    assert key_head_dim(lm.layer, lm.hidden_size, lm.expand_k, lm.num_heads) == 64
    assert lm.steps >= 1000 and lm.eval_size >= 512 and lm.layer == "gla"
    assert long.positions_of("lm") == ("rope", "selective") and long.lrs("lm") == (2e-3, 4e-3)
    for task in ("state", "copy", "mqar", "lm"):
        a, b = long.task_config(task), quick.task_config(task)
        sizes = ("layer", "hidden_size", "num_layers", "expand_k", "seq_len", "lr", "positions")
        assert all(getattr(a, f) == getattr(b, f) for f in sizes), task
        assert a.training(0.1, 1.0, 0.1) == b.training(0.1, 1.0, 0.1), task  # the same protocol as quick
        assert budget_shortfall(task, long.settings(task).to_dict()) == []
    assert long.mqar == quick.mqar
    assert all(budget_shortfall(t, quick.settings(t).to_dict()) for t in LONG_BUDGET)
    # the budget check reads settings the way results.json stores them
    assert budget_shortfall("copy", {**copy.to_dict(), "steps": 1999}) == ["steps 1999 < 2000"]
    assert budget_shortfall("lm", {**lm.to_dict(), "num_heads": 2}) == ["head_dim 32 < 64"]
    assert budget_shortfall("state", {**state.to_dict(), "batch_size": 64, "steps": 10_000}) == []


def test_quick_is_the_class_default_and_presets_round_trip() -> None:
    assert SelectiveRopeConfig() == PRESETS["quick"]
    for name, cfg in PRESETS.items():
        assert cfg.tasks == TASKS and cfg.positions == ("nope", "rope", "selective")
        assert config_from_dict(SelectiveRopeConfig, config_to_dict(cfg)) == cfg, name
    assert not hasattr(PRESETS["quick"], "scale")


def _replace(cfg: SelectiveRopeConfig, changes: dict[str, Any]) -> SelectiveRopeConfig:
    """``dataclasses.replace`` with ``"<task>.<field>"`` keys changing the nested task configs."""
    top: dict[str, Any] = {k: v for k, v in changes.items() if "." not in k}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in changes.items():
        if "." in key:
            task, field = key.split(".")
            nested.setdefault(task, {})[field] = value
    for task, fields in nested.items():  # all of a task's changes at once
        top[task] = dataclasses.replace(getattr(cfg, task), **fields)
    return dataclasses.replace(cfg, **top)


@pytest.mark.parametrize(
    "changes,field",
    [
        ({"task": "parity"}, "task"),
        ({"state.seq_len": 0}, "state.seq_len"),
        ({"mqar.eval_len": -3}, "mqar.eval_len"),
        ({"lm.steps": 0}, "lm.steps"),
        ({"lm.hidden_size": 60, "lm.num_heads": 4}, "lm.num_heads"),  # key head dim 60*0.5/4 is not an integer
        ({"state.hidden_size": 36, "state.num_heads": 4}, "state.num_heads"),  # head dim 9 is odd
        ({"state.hidden_size": 30, "state.num_heads": 4}, "state.hidden_size"),
        ({"mqar.seq_len": 63}, "mqar.seq_len"),
        ({"copy.seq_len": 10}, "copy.seq_len"),
        ({"copy.min_len": 20}, "copy.min_len"),  # above max_len 8
        ({"copy.eval_lengths": ()}, "copy.eval_lengths"),
        ({"copy.temp_theta": 2.0}, "copy.temp_theta"),  # rfa needs (0, 1)
        ({"state.temp_type": "rope", "state.temp_theta": 0.5}, "state.temp_theta"),
        ({"state.lr": -1.0}, "state.lr"),
        ({"lm.layer": "lstm"}, "lm.layer"),
        ({"warmup_frac": 1.0}, "warmup_frac"),
        ({"lr_factors": ()}, "lr_factors"),
        ({"lr_factors": (1.0, 0.0)}, "lr_factors[1]"),
        ({"lr_sweep": ("parity",)}, "lr_sweep[0]"),
        ({"phi_proj_rank": 0}, "phi_proj_rank"),
        ({"lm.positions": ()}, "lm.positions"),
        ({"lm.positions": ("rope", "rope")}, "lm.positions"),
        ({"lm.positions": ("alibi",)}, "lm.positions[0]"),
        ({"lm.stop_at": 0.99}, "lm.stop_at"),  # stopping needs the validation of select_best
        ({"state.stop_at": 1.5}, "state.stop_at"),
        ({"copy.beta2": 1.0}, "copy.beta2"),
        ({"state.grad_clip": -1.0}, "state.grad_clip"),
    ],
)
def test_bad_configs_raise(changes: dict, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        _replace(PRESETS["smoke"], changes)
    assert err.value.field == field


def test_overrides_and_mqar_vocabulary() -> None:
    full = PRESETS["full"]
    cfg = _replace(full, {"task": "state", "state.use_gate": True, "state.conv_act": "none", "state.steps": 7})
    cfg = _replace(cfg, {"state.layer": "fox"})
    s = cfg.settings("state")
    assert s.selective["use_gate"] is True and s.selective["conv_act"] is None and s.steps == 7 and s.layer == "fox"
    assert cfg.settings("copy") == full.settings("copy")  # a task's change stays in that task
    assert cfg.tasks == ("state",)
    assert dataclasses.replace(cfg, compare=False, position="rope").positions == ("rope",)
    mqar = _replace(full, {"task": "mqar", "mqar.kv_pairs": 8, "mqar.vocab_size": 300}).settings("mqar")
    assert (mqar.mqar_kv_pairs, mqar.vocab_size) == (8, 300)
    with pytest.raises(ConfigError, match="below the MQAR vocabulary"):
        _replace(full, {"mqar.vocab_size": 100})  # vocabulary must exceed T = 256


def test_task_optimiser_overrides_and_top_level_fallback() -> None:
    """A task's None optimiser fields take the top-level values; set ones override them."""
    cfg = dataclasses.replace(PRESETS["quick"], weight_decay=0.3, grad_clip=2.0, warmup_frac=0.2)
    assert cfg.settings("lm").training["weight_decay"] == 0.3 and cfg.settings("mqar").training["grad_clip"] == 2.0
    assert cfg.settings("state").training["weight_decay"] == 1e-6  # the official value, set on the task
    cfg = _replace(cfg, {"state.weight_decay": None, "state.warmup_frac": None, "copy.stop_at": 0.99})
    assert (
        cfg.settings("state").training["weight_decay"] == 0.3 and cfg.settings("state").training["warmup_frac"] == 0.2
    )
    assert cfg.settings("copy").training["stop_at"] == 0.99


def test_positions_per_task() -> None:
    """Quick trains NoPE on every task but the LM (no LM claim is against NoPE); ``--no-compare`` trains the one
    ``--position`` everywhere; ``positions`` lists every position some task trains."""
    quick, full = PRESETS["quick"], PRESETS["full"]
    assert quick.positions_of("lm") == ("rope", "selective")
    assert all(quick.positions_of(t) == ("nope", "rope", "selective") for t in ("state", "copy", "mqar"))
    assert all(full.positions_of(t) == ("nope", "rope", "selective") for t in TASKS)
    assert _replace(quick, {"task": "lm"}).positions == ("rope", "selective")
    assert _replace(quick, {"lm.positions": ("selective", "nope")}).positions_of("lm") == ("nope", "selective")
    single = _replace(quick, {"compare": False, "position": "nope"})
    assert single.positions_of("lm") == ("nope",) and single.positions == ("nope",)


def test_sweeps_follow_the_paper() -> None:
    """LM: lr tuned per position; copying: Selective RoPE's bias and gate each on and off (the official
    copying sweep); a task outside ``bias_gate_sweep`` uses its own switches; the low-rank phase projection
    has rank 32."""
    quick = PRESETS["quick"]
    assert quick.phi_proj_rank == 32 and quick.settings("copy").selective["phi_proj_rank"] == 32
    lr = quick.settings("lm").lr
    assert quick.lrs("lm") == (lr, lr * 2.0)  # lr x 0.5 lost at every position in the quick sweep (README)
    full_lr = PRESETS["full"].settings("lm").lr
    assert PRESETS["full"].lrs("lm") == (full_lr * 0.5, full_lr, full_lr * 2.0)
    assert quick.lrs("state") == (quick.settings("state").lr,)
    assert quick.selective_variants("state") == ({},)
    variants = quick.selective_variants("copy")
    assert [(v["use_bias"], v["use_gate"]) for v in variants] == [
        (False, False),
        (False, True),
        (True, False),
        (True, True),
    ]
    fixed = _replace(quick, {"bias_gate_sweep": (), "copy.use_bias": True})
    assert fixed.selective_variants("copy") == ({},) and fixed.settings("copy").selective["use_bias"] is True
    assert quick.settings("copy").selective["skip_conv"] is True  # the paper's copying setting


def _help(preset: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parse_method_args(SPEC, ["--preset", preset, "--help"], prog="selective-rope")
    return re.sub(r"[\s│]+", " ", out.getvalue())


def test_help_shows_the_task_flags_with_real_defaults() -> None:
    text = _help("quick")
    # the per-task optimiser overrides are the one legitimate None (the top-level value); nothing else is
    fallback = r"--\w+\.(weight-decay|grad-clip|warmup-frac) \{None\}\|FLOAT .*?\(default: [^)]*\)"
    assert len(re.findall(fallback, text)) == 12
    rest = re.sub(fallback, "", text)
    assert "{None" not in rest and "default: None" not in rest
    for flag in (
        "--state.steps",
        "--copy.max-len",
        "--copy.use-bias",
        "--mqar.kv-pairs",
        "--mqar.vocab-size",
        "--lm.layer",
    ):
        assert flag in text, flag
    assert "--scale" not in text and "--steps " not in text
    assert re.search(r"--copy\.steps INT [^(]*\(default: 300; > 0\)", text)
    assert re.search(r"--lm\.seq-len INT [^(]*\(default: 128; > 0\)", text)
    assert re.search(r"--copy\.steps INT [^(]*\(default: 5000; > 0\)", _help("full"))  # the preset's values


def test_cli_sets_one_task_and_names_the_nested_field() -> None:
    argv = [
        "--task",
        "copy",
        "--copy.steps",
        "8",
        "--copy.use-bias",
        "True",
        "--lm.layer",
        "fox",
        "--state.eval-len",
        "96",
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        cfg, _, preset = parse_method_args(SPEC, argv, prog="selective-rope")
    assert preset == "quick" and cfg.task == "copy"
    assert (cfg.copy.steps, cfg.copy.use_bias, cfg.lm.layer, cfg.state.eval_len) == (8, True, "fox", 96)
    assert cfg.mqar == PRESETS["quick"].mqar
    with pytest.raises((ConfigError, UsageError)) as bad:
        parse_method_args(SPEC, ["--state.seq-len", "0"], prog="selective-rope")
    assert "state.seq_len" in str(bad.value)
