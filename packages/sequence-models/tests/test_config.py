"""Config validation: bad values raise ConfigError naming the field; presets and task tables resolve."""

from __future__ import annotations

import dataclasses

import pytest

from iclr26_sequence_models.methods.selective_rope.config import PRESETS, TASKS, SelectiveRopeConfig
from iclr26_shared.config import config_from_dict, config_to_dict
from iclr26_shared.errors import ConfigError


@pytest.mark.parametrize(
    "changes,field",
    [
        ({"task": "parity"}, "task"),
        ({"seq_len": 0}, "seq_len"),
        ({"eval_len": -3}, "eval_len"),
        ({"steps": 0}, "steps"),
        ({"hidden_size": 60, "num_heads": 4}, "num_heads"),  # key head dim 60*0.5/4 is not an integer
        ({"task": "state", "hidden_size": 36, "num_heads": 4}, "num_heads"),  # head dim 9 is odd
        ({"task": "mqar", "seq_len": 63}, "seq_len"),
        ({"task": "copy", "seq_len": 10}, "seq_len"),
        ({"temp_type": "rfa", "temp_theta": 2.0}, "temp_theta"),
        ({"temp_type": "rope", "temp_theta": 0.5}, "temp_theta"),
        ({"lr": -1.0}, "lr"),
        ({"layer": "lstm"}, "layer"),
        ({"warmup_frac": 1.0}, "warmup_frac"),
        ({"lr_factors": ()}, "lr_factors"),
        ({"lr_factors": (1.0, 0.0)}, "lr_factors[1]"),
        ({"lr_sweep": ("parity",)}, "lr_sweep[0]"),
        ({"phi_proj_rank": 0}, "phi_proj_rank"),
    ],
)
def test_bad_configs_raise(changes: dict, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        dataclasses.replace(PRESETS["smoke"], **changes)
    assert err.value.field == field


def test_presets_resolve_every_task_and_round_trip() -> None:
    for name, cfg in PRESETS.items():
        assert cfg.tasks == TASKS and cfg.positions == ("nope", "rope", "selective")
        for task in TASKS:
            s = cfg.settings(task)
            assert s.steps >= 1 and s.hidden_size % s.num_heads == 0
        assert config_from_dict(SelectiveRopeConfig, config_to_dict(cfg)) == cfg, name


def test_paper_settings_and_overrides() -> None:
    full = PRESETS["full"]
    state = full.settings("state")
    assert (state.num_layers, state.hidden_size, state.num_heads, state.seq_len, state.eval_len) == (
        1,
        384,
        12,
        128,
        512,
    )
    assert state.selective["temp_theta"] == 1.0 and state.selective["use_bias"] is True
    copy = full.settings("copy").selective
    assert copy["skip_conv"] is True and copy["temp_type"] == "rfa" and copy["temp_max"] == 0.25
    lm = full.settings("lm").selective
    assert lm["phi_parametrization"] == "full-rank" and lm["conv_act"] == "silu" and lm["use_gate"] is True
    cfg = dataclasses.replace(full, task="state", use_gate=True, conv_act="none", steps=7, layer="fox")
    s = cfg.settings("state")
    assert s.selective["use_gate"] is True and s.selective["conv_act"] is None and s.steps == 7 and s.layer == "fox"
    assert cfg.tasks == ("state",)
    assert dataclasses.replace(cfg, compare=False, position="rope").positions == ("rope",)
    mqar = dataclasses.replace(full, task="mqar", mqar_kv_pairs=8, mqar_vocab=300).settings("mqar")
    assert (mqar.mqar_kv_pairs, mqar.vocab_size) == (8, 300)
    with pytest.raises(ConfigError, match="below the MQAR vocabulary"):
        dataclasses.replace(full, task="mqar", mqar_vocab=100)  # vocabulary must exceed T = 256


def test_sweeps_follow_the_paper() -> None:
    """LM: lr tuned per position; copying: Selective RoPE's bias and gate each on and off (the official
    copying sweep); a switch given explicitly is not swept; the low-rank phase projection has rank 32."""
    quick = PRESETS["quick"]
    assert quick.phi_proj_rank == 32 and quick.settings("copy").selective["phi_proj_rank"] == 32
    lr = quick.settings("lm").lr
    assert quick.lrs("lm") == (lr * 0.5, lr, lr * 2.0)
    assert quick.lrs("state") == (quick.settings("state").lr,)
    assert quick.selective_variants("state") == ({},)
    variants = quick.selective_variants("copy")
    assert {(v["use_bias"], v["use_gate"]) for v in variants} == {
        (False, False),
        (False, True),
        (True, False),
        (True, True),
    }
    fixed = dataclasses.replace(quick, use_bias=True).selective_variants("copy")
    assert [(v["use_bias"], v["use_gate"]) for v in fixed] == [(True, False), (True, True)]
    assert quick.settings("copy").selective["skip_conv"] is True  # the paper's copying setting
