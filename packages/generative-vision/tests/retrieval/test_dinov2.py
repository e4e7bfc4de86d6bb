"""The opt-in DINOv2 backbone: loads only local weights (a tiny randomly initialised Dinov2Model saved to a
temporary folder stands in for the real checkpoint), gives unit patch-token descriptors at patch centres,
runs the smoke experiment end to end, and a missing checkpoint is one clear line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from iclr26_generative_vision import cli
from iclr26_generative_vision.retrieval.dinov2 import dinov2_describe, load_dinov2
from iclr26_shared.errors import DataError
from iclr26_shared.testing import assert_valid_run_dir, run_cli

transformers = pytest.importorskip("transformers")


def _tiny_dinov2(path: Path) -> Path:
    torch.manual_seed(0)
    cfg = transformers.Dinov2Config(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, patch_size=14, image_size=98
    )
    transformers.Dinov2Model(cfg).save_pretrained(path)
    return path


def test_loads_a_local_checkpoint_and_describes_patches(tmp_path: Path) -> None:
    model = load_dinov2(str(_tiny_dinov2(tmp_path / "dinov2")))
    img = (np.random.default_rng(0).random((96, 96)) * 255).astype(np.uint8)
    desc, xy = dinov2_describe(model, img, max_keypoints=1000)
    assert desc.shape == (49, 32) and xy.shape == (49, 2)  # 96 px -> 98 = 7 x 14: 7 x 7 patches of width 32
    np.testing.assert_allclose(np.linalg.norm(desc, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(np.unique(xy[:, 0]), (np.arange(7) + 0.5) * 96 / 7, rtol=1e-5)  # patch centres
    np.testing.assert_allclose(np.unique(xy[:, 1]), (np.arange(7) + 0.5) * 96 / 7, rtol=1e-5)
    few, few_xy = dinov2_describe(model, img, max_keypoints=10, select="norm")  # 10 largest norms, in order
    assert few.shape == (10, 32) and {tuple(p) for p in few_xy} <= {tuple(p) for p in xy}
    again, _ = dinov2_describe(load_dinov2(str(tmp_path / "dinov2")), img, max_keypoints=1000)
    np.testing.assert_array_equal(desc, again)  # the saved weights, not a fresh initialisation


@pytest.mark.parametrize("what", ["missing", "no-config", "bad-id"])
def test_absent_weights_are_one_clear_error(tmp_path: Path, what: str) -> None:
    (tmp_path / "empty").mkdir()
    source = {"missing": str(tmp_path / "nope"), "no-config": str(tmp_path / "empty"), "bad-id": "nobody/none"}[what]
    with pytest.raises(DataError, match="DINOv2 weights not found") as err:
        load_dinov2(source)
    assert "\n" not in str(err.value) and ("dinov2-weights" in str(err.value))


def test_smoke_run_with_dinov2_descriptors(tmp_path: Path) -> None:
    weights = _tiny_dinov2(tmp_path / "dinov2")
    args = ["elvis", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path / "runs"), "--quiet"]
    args += ["--descriptor", "dinov2", "--dinov2-weights", str(weights), "--variants", "elvis"]
    res = run_cli(cli.main, args)
    assert res.code == 0, res.err
    (run_dir,) = (tmp_path / "runs" / "elvis").iterdir()
    results = assert_valid_run_dir(run_dir)
    assert results["descriptor"] == "dinov2" and results["cost"]["elvis"]["params"] > 0
    assert 0 <= results["summary"]["elvis"]["ood"] <= 1
    bad = run_cli(cli.main, [*args[:-4], "--descriptor", "dinov2", "--dinov2-weights", str(tmp_path / "nope")])
    assert bad.code == 2 and "DINOv2 weights not found" in bad.err and "Traceback" not in bad.err


def test_cls_selection_is_the_official_top_k_by_cls_similarity(tmp_path: Path) -> None:
    """select="cls" (default): elvis/extract/extract.py without its detector weighs each patch by
    cos(CLS, token) and keeps torch.topk of it (descending); checked against numpy on the model's tokens."""
    model = load_dinov2(str(_tiny_dinov2(tmp_path / "dinov2")))
    img = (np.random.default_rng(1).random((96, 96)) * 255).astype(np.uint8)
    every, every_xy = dinov2_describe(model, img, max_keypoints=1000, select="norm")  # all 49, patch order
    x = torch.nn.functional.interpolate(
        torch.from_numpy(img.astype(np.float32) / 255)[None, None].expand(1, 3, 96, 96), size=(98, 98), mode="bilinear"
    )
    mean, std = torch.tensor([0.485, 0.456, 0.406]), torch.tensor([0.229, 0.224, 0.225])
    with torch.no_grad():
        hidden = model(pixel_values=(x - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)).last_hidden_state[0].numpy()
    cls = hidden[0] / np.linalg.norm(hidden[0])
    w = (hidden[1:] / np.linalg.norm(hidden[1:], axis=1, keepdims=True)) @ cls
    order = np.argsort(-w)[:10]  # the 10 most CLS-like patches, highest first
    top, top_xy = dinov2_describe(model, img, max_keypoints=10)
    np.testing.assert_allclose(top, every[order], atol=1e-5)
    np.testing.assert_array_equal(top_xy, every_xy[order])
    assert not np.array_equal(order, np.sort(order))  # descending weight, not patch order
