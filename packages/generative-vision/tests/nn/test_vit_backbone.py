"""The ViT backbone adapter of causal-delta (tiny random-init Dinov2Model / ViTModel, nothing downloaded): its
pooled features and patch grid equal a hand computation from the transformers model's last_hidden_state, the
CDE loss and a training step run through it (library and experiment), a saved CDE model with a ViT reloads
without the checkpoint folder, and bad inputs are one clear line."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr26_generative_vision import cli
from iclr26_generative_vision.methods.causal_delta.config import PRESETS, CausalDeltaConfig
from iclr26_generative_vision.methods.causal_delta.model import (
    CausalTripletNet,
    build_model,
    evaluate,
    loss_terms,
    train_variant,
)
from iclr26_generative_vision.methods.causal_delta.spec import SPEC
from iclr26_generative_vision.nn.causal_delta import CausalDeltaEncoder, CausalDeltaModel, l1_sparsity, supcon_loss
from iclr26_generative_vision.nn.vit_backbone import (
    ViTBackbone,
    load_vit_backbone,
    read_vit_config,
    vit_backbone_from_config,
)
from iclr26_shared.errors import ConfigError, DataError
from iclr26_shared.models import load_model, save_model
from iclr26_shared.testing import assert_models_roundtrip, run_cli, smoke_run

transformers = pytest.importorskip("transformers")

_TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


def _config(kind: str, patch: int = 8, image: int = 32) -> object:
    cls = transformers.Dinov2Config if kind == "dinov2" else transformers.ViTConfig
    return cls(patch_size=patch, image_size=image, **_TINY)


def _backbone(kind: str, pooling: str = "cls", pixel_norm: str = "imagenet") -> ViTBackbone:
    torch.manual_seed(0)
    backbone = vit_backbone_from_config(_config(kind), pooling=pooling, pixel_norm=pixel_norm)  # type: ignore[arg-type]
    return backbone.eval()


def _saved(tmp_path: Path, kind: str = "dinov2") -> Path:
    torch.manual_seed(0)
    model = transformers.Dinov2Model(_config(kind)) if kind == "dinov2" else transformers.ViTModel(_config(kind))
    model.save_pretrained(tmp_path / kind)
    return tmp_path / kind


def _hand_hidden(backbone: ViTBackbone, x: torch.Tensor, pixel_norm: str) -> torch.Tensor:
    """last_hidden_state of the wrapped model on the pixels the adapter should feed it."""
    if pixel_norm == "imagenet":
        mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
        x = ((x + 1) / 2 - mean) / std
    kwargs = {"interpolate_pos_encoding": True} if backbone.model_type == "vit" else {}
    return backbone.model(pixel_values=x, **kwargs).last_hidden_state


@pytest.mark.parametrize("kind", ["dinov2", "vit"])
@pytest.mark.parametrize("pooling", ["cls", "mean"])
@pytest.mark.parametrize("pixel_norm", ["imagenet", "none"])
@torch.no_grad()
def test_pooled_features_and_grid_equal_the_last_hidden_state(kind: str, pooling: str, pixel_norm: str) -> None:
    backbone = _backbone(kind, pooling, pixel_norm)
    x = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(1)) * 2 - 1
    hidden = _hand_hidden(backbone, x, pixel_norm)  # [2, 1 + 16, 32]
    assert hidden.shape == (2, 17, 32)
    expected = hidden[:, 0] if pooling == "cls" else hidden[:, 1:].mean(dim=1)
    torch.testing.assert_close(backbone.global_features(x), expected, rtol=0, atol=0)
    grid = backbone(x)
    assert grid.shape == (2, 32, 4, 4) and backbone.out_channels == 32
    for i, j in [(0, 0), (0, 3), (2, 1), (3, 3)]:  # token 1 + i·4 + j is cell (i, j)
        torch.testing.assert_close(grid[:, :, i, j], hidden[:, 1 + 4 * i + j], rtol=0, atol=0)
    if pooling == "mean":
        torch.testing.assert_close(backbone.global_features(x), grid.mean(dim=(2, 3)), rtol=1e-6, atol=1e-6)


@torch.no_grad()
def test_other_sizes_interpolate_the_position_embeddings_and_the_pixel_norm_matters() -> None:
    backbone = _backbone("dinov2", "mean")
    x = torch.rand(1, 3, 48, 24, generator=torch.Generator().manual_seed(2)) * 2 - 1  # a 6 x 3 grid, not 4 x 4
    hidden = _hand_hidden(backbone, x, "imagenet")
    assert backbone(x).shape == (1, 32, 6, 3)
    torch.testing.assert_close(backbone.global_features(x), hidden[:, 1:].mean(dim=1), rtol=0, atol=0)
    other = ViTBackbone(backbone.model, "mean", "none")
    assert not torch.allclose(other.global_features(x), backbone.global_features(x))


def test_cde_loss_and_a_training_step_run_through_the_vit() -> None:
    for mode in ("global", "patch"):
        torch.manual_seed(0)
        vit_backbone = vit_backbone_from_config(_config("dinov2"))
        encoder = CausalDeltaEncoder(vit_backbone, 16, 32, mode)  # type: ignore[arg-type]
        model = CausalDeltaModel(encoder, num_actions=3, top_k=4).train()
        x = torch.rand(6, 3, 32, 32, generator=torch.Generator().manual_seed(3)) * 2 - 1
        y = x.clone()
        y[:, :, :8, :8] = 1.0  # the "action" changes one corner patch
        same = model(x, x.clone())["delta"]
        torch.testing.assert_close(same, torch.zeros_like(same), rtol=0, atol=1e-6)  # identical images: δ = 0
        actions = torch.tensor([0, 0, 1, 1, 2, 2])
        out = model(x, y)
        assert out["delta"].shape == (6, 16) and (mode == "global" or out["patches"].shape == (6, 4, 16))
        delta = out["delta"]
        loss = F.cross_entropy(out["logits"], actions) + 2.0 * supcon_loss(delta, actions) + l1_sparsity(delta)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        opt.zero_grad()
        loss.backward()
        vit: Any = vit_backbone.model
        for name in ("embeddings.patch_embeddings.projection.weight", "embeddings.cls_token", "layernorm.weight"):
            grad = dict(vit.named_parameters())[name].grad
            assert grad is not None and grad.abs().sum() > 0, name  # the ViT is fine-tuned, CLS token included
        assert not vit.embeddings.mask_token.requires_grad  # frozen: never used without bool_masked_pos
        before = vit.embeddings.patch_embeddings.projection.weight.detach().clone()
        opt.step()
        assert torch.isfinite(loss) and not torch.equal(before, vit.embeddings.patch_embeddings.projection.weight)


def _vit_cfg(weights: Path, **changes: object) -> CausalDeltaConfig:
    base = dict(
        backbone="vit", backbone_weights=str(weights), image_size=32, proj_dim=16, proj_hidden=32, respair_dim=16
    )
    return dataclasses.replace(PRESETS["smoke"], **(base | changes))  # type: ignore[arg-type]


def test_the_experiment_trains_every_variant_kind_on_a_local_checkpoint(tmp_path: Path) -> None:
    cfg = _vit_cfg(_saved(tmp_path), epochs=2, batch_size=8, top_k=4)
    assert cfg.num_patches == 16 and cfg.vit_patch_size == 8
    gen = np.random.default_rng(0)
    images = gen.integers(0, 256, size=(16, 2, 32, 32, 3), dtype=np.uint8)
    verbs, nouns = gen.integers(0, 7, size=16), gen.integers(0, 8, size=16)
    loaded = load_vit_backbone(tmp_path / "dinov2")
    for variant in ("cde", "cde-patch", "vanilla"):
        torch.manual_seed(0)
        model = build_model(cfg, variant)
        backbone = model.net.encoder.backbone if variant.startswith("cde") else model.net.backbone  # pyright: ignore
        assert isinstance(backbone, ViTBackbone)
        for (name, p), q in zip(backbone.model.state_dict().items(), loaded.model.state_dict().values(), strict=True):
            assert torch.equal(p, q), name  # the checkpoint's weights, not a fresh initialisation
        losses = train_variant(model, cfg, variant, images, verbs, nouns, seed=0, device=torch.device("cpu"))
        assert len(losses) == 4 and all(np.isfinite(losses))
        pred, delta = evaluate(model, images, device=torch.device("cpu"))
        assert pred.shape == (16,) and delta.shape == (16, 16)
        terms = loss_terms(cfg, variant, model(*torch.rand(2, 4, 3, 32, 32)), torch.arange(4), torch.arange(4))
        assert torch.isfinite(terms["loss"])


@torch.no_grad()
def test_a_saved_model_reloads_without_the_checkpoint_folder(tmp_path: Path) -> None:
    cfg = _vit_cfg(_saved(tmp_path, "vit"), vit_pooling="mean")
    torch.manual_seed(0)
    model = build_model(cfg, "cde").eval()
    folder = save_model(tmp_path / "run", "comp-cde", model)
    shutil.rmtree(tmp_path / "vit")  # the run's copy of the checkpoint is gone: the saved model is self-contained
    loaded = load_model(tmp_path / "run", "comp-cde")  # CausalTripletNet.from_pretrained, realigned
    assert type(loaded) is CausalTripletNet and not loaded.training
    x0, x1 = torch.rand(2, 3, 3, 32, 32, generator=torch.Generator().manual_seed(4)) * 2 - 1
    a, b = model(x0, x1), loaded(x0, x1)
    torch.testing.assert_close(a["delta"], b["delta"], rtol=0, atol=0)
    torch.testing.assert_close(a["logits"], b["logits"], rtol=0, atol=0)
    backbone = loaded.net.encoder.backbone  # pyright: ignore[reportAttributeAccessIssue]
    assert isinstance(backbone, ViTBackbone) and (backbone.model_type, backbone.pooling) == ("vit", "mean")
    saved = (folder / "config.json").read_text()
    assert '"backbone_weights": ""' in saved and '"model_type": "vit"' in saved


def test_bad_inputs_are_one_clear_line(tmp_path: Path) -> None:
    backbone = _backbone("dinov2")
    with pytest.raises(ValueError, match="multiples of the ViT patch size 8"):
        backbone(torch.zeros(1, 3, 30, 32))
    with pytest.raises(ValueError, match=r"expected \[B, 3, H, W\]"):
        backbone(torch.zeros(1, 1, 32, 32))
    with pytest.raises(ValueError, match="pooling"):
        ViTBackbone(backbone.model, "max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Dinov2Model or ViTModel"):
        ViTBackbone(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="model_type"):
        vit_backbone_from_config({"model_type": "bert"})
    (tmp_path / "empty").mkdir()
    (tmp_path / "bert").mkdir()
    (tmp_path / "bert" / "config.json").write_text('{"model_type": "bert"}')
    for folder, needle in [("nope", "ViT weights not found"), ("empty", "ViT weights not found"), ("bert", "'bert'")]:
        with pytest.raises(DataError, match=needle) as err:
            load_vit_backbone(tmp_path / folder)
        assert "\n" not in str(err.value)
    assert read_vit_config(_saved(tmp_path))["patch_size"] == 8


def test_config_checks_the_checkpoint_and_the_image_size(tmp_path: Path) -> None:
    weights = _saved(tmp_path)
    with pytest.raises(ConfigError, match="backbone_weights"):
        dataclasses.replace(PRESETS["smoke"], backbone="vit")  # no folder
    with pytest.raises(ConfigError, match="backbone_weights"):
        _vit_cfg(tmp_path / "missing")
    with pytest.raises(ConfigError, match="image_size") as err:
        _vit_cfg(weights, image_size=36)
    assert "patch size 8" in str(err.value)
    with pytest.raises(ConfigError, match="top_k"):
        _vit_cfg(weights, top_k=17)  # 16 patches at 32 px
    assert _vit_cfg(weights, image_size=48).num_patches == 36
    assert CausalDeltaConfig().vit_pooling == "cls" and CausalDeltaConfig().backbone == "cnn"


def test_smoke_run_with_the_vit_backbone_and_its_flags(tmp_path: Path) -> None:
    weights = _saved(tmp_path)
    run, results = smoke_run(
        SPEC,
        tmp_path / "runs",
        backbone="vit",
        backbone_weights=str(weights),
        variants=("vanilla", "cde"),
        splits=("comp",),
        top_k=4,
    )
    x0, x1 = torch.rand(2, 2, 3, 32, 32, generator=torch.Generator().manual_seed(5)) * 2 - 1
    assert_models_roundtrip(run, dict.fromkeys(run.saved_models, lambda m: m(x0, x1)))
    assert set(results["accuracy"]["comp"]) == {"vanilla", "cde"}
    argv = ["causal-delta", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path / "bad"), "--quiet"]
    res = run_cli(cli.main, [*argv, "--backbone", "vit", "--backbone-weights", str(tmp_path / "nope")])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "backbone_weights" in res.err
    res = run_cli(cli.main, [*argv, "--backbone", "vit", "--backbone-weights", str(weights), "--vit-pooling", "max"])
    assert res.code == 2 and "vit_pooling" in res.err.replace("-", "_")
