"""The opt-in DINOv2 backbone: loads only local weights (a tiny randomly initialised Dinov2Model saved to a
temporary folder stands in for the real checkpoint), gives unit patch-token descriptors at patch centres,
runs the smoke experiment end to end, and a missing checkpoint is one clear line (exit 2); the official
SpatialAttention2d patch detector (port, local weights, top-k selection)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr26_generative_vision import cli
from iclr26_generative_vision.methods.elvis.config import PRESETS
from iclr26_generative_vision.methods.elvis.train import dinov2_describer
from iclr26_generative_vision.retrieval.dinov2 import SpatialAttention2d, dinov2_describe, load_detector, load_dinov2
from iclr26_shared.errors import ConfigError, DataError
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


def _detector(dim: int, seed: int = 0) -> SpatialAttention2d:
    """A detector with non-trivial BatchNorm statistics (as a trained one has), in eval mode."""
    torch.manual_seed(seed)
    det = SpatialAttention2d(dim)
    with torch.no_grad():
        assert det.bn.running_mean is not None and det.bn.running_var is not None
        det.bn.running_mean.uniform_(-0.5, 0.5)
        det.bn.running_var.uniform_(0.5, 2.0)
        det.bn.weight.uniform_(0.5, 1.5)
        det.bn.bias.uniform_(-0.2, 0.2)
    return det.eval()


@torch.no_grad()
def test_the_detector_port_equals_a_hand_computation_and_has_the_official_keys() -> None:
    det = _detector(6)
    assert list(det.state_dict()) == [
        "conv1.weight",
        "conv1.bias",
        "bn.weight",
        "bn.bias",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
        "conv2.weight",
        "conv2.bias",
    ]  # the names of extract/spatial_attention_2d.py: the authors' checkpoint loads with strict=True
    x = torch.randn(2, 6, 3, 4, generator=torch.Generator().manual_seed(1))
    feats, att = det(x)
    sd = {k: v.numpy().astype(np.float64) for k, v in det.state_dict().items()}
    xn = x.numpy().astype(np.float64)
    a = np.einsum("oc,bchw->bohw", sd["conv1.weight"][:, :, 0, 0], xn) + sd["conv1.bias"][None, :, None, None]
    z = (a - sd["bn.running_mean"][None, :, None, None]) / np.sqrt(sd["bn.running_var"][None, :, None, None] + 1e-5)
    z = z * sd["bn.weight"][None, :, None, None] + sd["bn.bias"][None, :, None, None]
    s = np.einsum("oc,bchw->bohw", sd["conv2.weight"][:, :, 0, 0], np.maximum(z, 0)) + sd["conv2.bias"][0]
    np.testing.assert_allclose(att.numpy(), np.log1p(np.exp(s)), rtol=1e-5, atol=1e-6)  # softplus, beta 1
    np.testing.assert_allclose(feats.numpy(), z / np.linalg.norm(z, axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert feats.shape == (2, 6, 3, 4) and att.shape == (2, 1, 3, 4) and bool((att > 0).all())


def test_detector_weights_load_from_the_official_format_or_a_state_dict(tmp_path: Path) -> None:
    det = _detector(32, seed=3)
    torch.save({"state": det.state_dict(), "epoch": 4}, tmp_path / "dinov2_vits14_detector.pt")  # as train_detector
    torch.save(det.state_dict(), tmp_path / "bare.pt")
    x = torch.randn(1, 32, 2, 2)
    for name in ("dinov2_vits14_detector.pt", "bare.pt"):
        loaded = load_detector(tmp_path / name, 32)
        assert not loaded.training
        torch.testing.assert_close(loaded(x)[1], det(x)[1], rtol=0, atol=0)
    for path, dim, needle in [
        (tmp_path / "nope.pt", 32, "detector weights not found"),
        (tmp_path / "bare.pt", 64, "not a SpatialAttention2d detector for 64-d tokens"),
    ]:
        with pytest.raises(DataError, match=needle) as err:
            load_detector(path, dim)
        assert "\n" not in str(err.value)


def test_detector_selection_is_the_official_top_k_of_its_score(tmp_path: Path) -> None:
    """select="detector": the official extractor's ``_, w = detector(feats)`` on the [1, D, h, w] token map,
    torch.topk of w.flatten() (row-major, descending); descriptors stay the normalised tokens."""
    model = load_dinov2(str(_tiny_dinov2(tmp_path / "dinov2")))
    det = _detector(32, seed=5)
    img = (np.random.default_rng(2).random((96, 96)) * 255).astype(np.uint8)
    every, every_xy = dinov2_describe(model, img, max_keypoints=1000, select="norm")  # all 49, patch order
    x = torch.nn.functional.interpolate(
        torch.from_numpy(img.astype(np.float32) / 255)[None, None].expand(1, 3, 96, 96), size=(98, 98), mode="bilinear"
    )
    mean, std = torch.tensor([0.485, 0.456, 0.406]), torch.tensor([0.229, 0.224, 0.225])
    with torch.no_grad():
        hidden = model(pixel_values=(x - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)).last_hidden_state[0]
        grid = hidden[1:].T.reshape(1, 32, 7, 7)  # token 1 + 7i + j is cell (i, j)
        w = det(grid)[1].flatten().numpy()
    order = np.argsort(-w, kind="stable")[:10]
    top, top_xy = dinov2_describe(model, img, max_keypoints=10, select="detector", detector=det)
    np.testing.assert_allclose(top, every[order], atol=1e-5)
    np.testing.assert_array_equal(top_xy, every_xy[order])
    cls_top, _ = dinov2_describe(model, img, max_keypoints=10)
    assert not np.allclose(top, cls_top)  # another rule than cos(CLS, token)
    with pytest.raises(ValueError, match="needs a detector"):
        dinov2_describe(model, img, max_keypoints=10, select="detector")


def test_the_experiment_reads_the_detector_from_its_flags(tmp_path: Path) -> None:
    weights = _tiny_dinov2(tmp_path / "dinov2")
    det = _detector(32, seed=5)
    torch.save({"state": det.state_dict()}, tmp_path / "det.pt")
    cfg = dataclasses.replace(
        PRESETS["smoke"],
        descriptor="dinov2",
        dinov2_weights=str(weights),
        dinov2_select="detector",
        dinov2_detector=str(tmp_path / "det.pt"),
    )
    img = (np.random.default_rng(3).random((96, 96)) * 255).astype(np.uint8)
    got, got_xy = dinov2_describer(cfg)(img)
    want, want_xy = dinov2_describe(load_dinov2(str(weights)), img, cfg.max_keypoints, "detector", det)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(got_xy, want_xy)
    for changes in ({"dinov2_detector": ""}, {"descriptor": "sift"}):
        with pytest.raises(ConfigError, match="dinov2_detector"):
            dataclasses.replace(cfg, **changes)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="dinov2_detector"):
        dataclasses.replace(PRESETS["smoke"], dinov2_detector=str(tmp_path / "det.pt"))  # without select=detector
