"""CausalDeltaModel.save_pretrained / from_pretrained with any backbone the user passes (issue 54): the built-in
CNN, a transformers ViT (saved by its own save_pretrained beside the head), a hub-mixin module and a plain
user class named in the config, each reloaded bit for bit; what cannot be rebuilt is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from iclr26_generative_vision.nn.causal_delta import CausalDeltaEncoder, CausalDeltaModel, SmallCNN
from iclr26_generative_vision.nn.vit_backbone import vit_backbone_from_config
from iclr26_shared.errors import CheckpointError, ConfigError, DataError


class UserNet(nn.Module):
    """A user's backbone: a plain module with constructor arguments."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, stride=2, padding=1)
        self.out_channels = width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


class HubNet(UserNet, PyTorchModelHubMixin):
    """A user's backbone that saves itself (huggingface_hub mixin)."""


def _model(backbone: nn.Module, mode: str = "global") -> CausalDeltaModel:
    torch.manual_seed(1)
    return CausalDeltaModel(CausalDeltaEncoder(backbone, 8, 16, mode), 5, classifier="mlp", top_k=3).eval()  # type: ignore[arg-type]


def _pairs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(2)
    return torch.rand(3, 3, 32, 32, generator=gen) * 2 - 1, torch.rand(3, 3, 32, 32, generator=gen) * 2 - 1


def _same(a: CausalDeltaModel, b: CausalDeltaModel) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    x, x2 = _pairs()
    with torch.no_grad():
        oa, ob = a(x, x2), b(x, x2)
    assert oa.keys() == ob.keys() and all(torch.equal(oa[k], ob[k]) for k in oa)


@pytest.mark.parametrize("mode", ["global", "patch"])
def test_builtin_cnn_round_trip(tmp_path: Path, mode: str) -> None:
    torch.manual_seed(0)
    model = _model(SmallCNN((8, 16), groups=4), mode)
    model.save_pretrained(tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["backbone"] == {
        "class": "iclr26_generative_vision.nn.causal_delta:SmallCNN",
        "kind": "class",
        "init": {"channels": [8, 16], "groups": 4, "coords": True},
    }
    assert config["mode"] == mode and config["classifier"] == "mlp" and config["top_k"] == 3
    _same(model, CausalDeltaModel.from_pretrained(tmp_path / "m"))


def test_transformers_vit_is_saved_beside_the_head(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.Dinov2Config(
        patch_size=8, image_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
    )
    model = _model(vit_backbone_from_config(cfg, pooling="mean"))
    model.save_pretrained(tmp_path / "m")
    assert (tmp_path / "m" / "backbone" / "config.json").is_file()
    back = CausalDeltaModel.from_pretrained(tmp_path / "m")
    assert back.encoder.backbone.pooling == "mean"  # type: ignore[union-attr]
    _same(model, back)


def test_hub_mixin_backbone_saves_itself(tmp_path: Path) -> None:
    model = _model(HubNet(width=6))
    model.save_pretrained(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "backbone" / "config.json").read_text()) == {"width": 6}
    _same(model, CausalDeltaModel.from_pretrained(tmp_path / "m", backbone=HubNet))


def test_user_class_is_named_in_the_config_and_rebuilt_when_passed(tmp_path: Path) -> None:
    model = _model(UserNet(width=6))
    model.save_pretrained(tmp_path / "m", backbone_init={"width": 6})
    spec = json.loads((tmp_path / "m" / "config.json").read_text())["backbone"]
    assert spec["class"].endswith(":UserNet") and spec["init"] == {"width": 6}
    # the class's module is already imported (this test module): found without importing anything
    _same(model, CausalDeltaModel.from_pretrained(tmp_path / "m"))
    # a module neither imported nor one of the workspace's packages is never imported from a saved name (issue
    # 52, one policy with load_model: iclr26_shared.models.resolve_class): one line says what to pass
    cfg_file = tmp_path / "m" / "config.json"
    config = json.loads(cfg_file.read_text())
    config["backbone"]["class"] = "no_such_user_package.nets:UserNet"
    cfg_file.write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match=r"user class '.*:UserNet'.*pass backbone=UserNet") as err:
        CausalDeltaModel.from_pretrained(tmp_path / "m")
    assert "\n" not in str(err.value)
    config["backbone"]["class"] = spec["class"]
    cfg_file.write_text(json.dumps(config))
    _same(model, CausalDeltaModel.from_pretrained(tmp_path / "m", backbone=UserNet))
    _same(model, CausalDeltaModel.from_pretrained(tmp_path / "m", backbone=UserNet(width=6)))  # an instance
    # saved without its constructor arguments: the default width 8 cannot hold the width-6 weights
    model.save_pretrained(tmp_path / "bare")
    with pytest.raises(CheckpointError, match="do not fit"):
        CausalDeltaModel.from_pretrained(tmp_path / "bare", backbone=UserNet)
    with pytest.raises(CheckpointError, match="saved backbone is .*UserNet.*passed is .*SmallCNN"):
        CausalDeltaModel.from_pretrained(tmp_path / "m", backbone=SmallCNN)
    with pytest.raises(CheckpointError, match="config.json"):
        CausalDeltaModel.from_pretrained(tmp_path / "absent")


def test_bad_backbone_and_inputs_are_one_line() -> None:
    with pytest.raises(ConfigError, match="'backbone'.*out_channels"):
        CausalDeltaEncoder(nn.Linear(3, 4), 8, 16, "global")

    class Liar(UserNet):  # claims a width its features do not have
        def __init__(self) -> None:
            super().__init__(width=6)
            self.out_channels = 10

    model = _model(Liar())
    x, x2 = _pairs()
    with pytest.raises(DataError, match=r"backbone: pooled features are \(6, 6\), expected \[B, 10\]"):
        model(x, x2)
    model = _model(UserNet())
    with pytest.raises(DataError, match="x and x_after must be images"):
        model(x, x2[:, :, :16])
    with pytest.raises(DataError, match="x_after is torch.float64"):
        model(x, x2.double())
    with pytest.raises(DataError, match="the model's weights torch.float32"):
        model(x.double(), x2.double())
