"""Config validation and presets of causal-delta; bad flags exit 2 with one line naming the field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iclr26_generative_vision import cli
from iclr26_generative_vision.methods.causal_delta.config import PRESETS, CausalDeltaConfig
from iclr26_shared.errors import ConfigError
from iclr26_shared.testing import run_cli


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"variants": ("cde",)}, "variants"),
        ({"variants": ("vanilla", "cde", "cde")}, "variants"),
        ({"variants": ("vanilla", "cde", "dino")}, "variants"),
        ({"splits": ()}, "splits"),
        ({"splits": ("comp", "comp")}, "splits"),
        ({"splits": ("noun",), "ablation_split": "comp"}, "ablation_split"),
        ({"num_pairs": 10}, "num_pairs"),
        ({"image_size": 60}, "image_size"),
        ({"max_distractors": 4}, "max_distractors"),
        ({"comp_ood_fraction": 1.0}, "comp_ood_fraction"),
        ({"alpha_contrast": -1.0}, "alpha_contrast"),
        ({"temperature": 0.0}, "temperature"),
        ({"backbone_weights": "w.pt"}, "backbone_weights"),
        ({"backbone": "resnet18", "backbone_weights": "/no/such/weights.pt"}, "backbone_weights"),
        ({"variants": ("vanilla", "cde", "cde-patch"), "top_k": 65}, "top_k"),
        ({"batch_size": 2}, "batch_size"),
        ({"antonym_cosine": -2.0}, "antonym_cosine"),
    ],
)
def test_bad_configs_raise_naming_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(CausalDeltaConfig(), **changes)  # type: ignore[arg-type]


def test_paper_defaults_presets_and_derived_values() -> None:
    cfg = CausalDeltaConfig()
    assert (cfg.alpha_contrast, cfg.alpha_sparse, cfg.comp_ood_fraction, cfg.noun_ood_fraction) == (2.0, 1.0, 0.3, 0.4)
    assert (cfg.batch_size, cfg.respair_dim, cfg.backbone) == (128, 64, "cnn")
    assert set(PRESETS) == {"smoke", "quick", "full"}
    assert (
        cfg.num_patches == 64 and cfg.trained_on("cde-no-sparse") == ("comp",) and cfg.trained_on("cde") == cfg.splits
    )
    assert PRESETS["full"].trained_on("cde-ce") == ("comp", "noun")


def test_bad_flags_exit_2_with_one_line(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["causal-delta", "--preset", "smoke", "--image-size", "30", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "image_size" in res.err
    res = run_cli(cli.main, ["causal-delta", "--preset", "smoke", "--alpha-sparse", "-1", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "alpha_sparse" in res.err
    assert not (tmp_path / "causal-delta").exists() or not any((tmp_path / "causal-delta").glob("*/results.json"))
