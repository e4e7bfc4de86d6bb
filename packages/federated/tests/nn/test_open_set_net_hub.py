"""OpenSetNet around a user's extractor saves and loads through huggingface_hub's mixin (no feature_dim by hand)."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn

from iclr26_federated.nn.models import FedOpenMatchNet, OpenSetNet, SmallCNN


class UserExtractor(nn.Module):
    """A user's feature extractor ``[B, 1, H, W] -> [B, 4·width]``; ``config`` rebuilds it."""

    def __init__(self, width: int = 3) -> None:
        super().__init__()
        self.config = {"width": width}
        self.body = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def _probe() -> torch.Tensor:
    return torch.rand(5, 1, 8, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1


def test_a_users_open_set_net_round_trips_bit_for_bit(tmp_path) -> None:
    torch.manual_seed(0)
    net = OpenSetNet(UserExtractor(3), num_known=4, feature_dim=12).eval()
    net.save_pretrained(tmp_path / "net")
    config = json.loads((tmp_path / "net" / "config.json").read_text())
    assert config == {
        "extractor_class": f"{UserExtractor.__module__}:UserExtractor",
        "extractor_init": {"width": 3},
        "feature_dim": 12,
        "num_known": 4,
    }
    again = OpenSetNet.from_pretrained(tmp_path / "net")  # its module is imported: found without help
    assert isinstance(again, OpenSetNet) and isinstance(again.extractor, UserExtractor)
    a, b = net.state_dict(), again.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    with torch.no_grad():
        assert all(torch.equal(p, q) for p, q in zip(net(_probe()), again(_probe()), strict=True))
    # the built-in extractor carries its own config: D comes from out_dim, nothing by hand
    cnn = OpenSetNet(SmallCNN(1, 4), 3).eval()
    cnn.save_pretrained(tmp_path / "cnn")
    with torch.no_grad():
        assert torch.equal(OpenSetNet.from_pretrained(tmp_path / "cnn")(_probe())[0], cnn(_probe())[0])
    # FedOpenMatchNet keeps its own config (arch, in_channels, num_known, width)
    fom = FedOpenMatchNet("cnn", 1, 3, 4).eval()
    fom.save_pretrained(tmp_path / "fom")
    assert json.loads((tmp_path / "fom" / "config.json").read_text())["arch"] == "cnn"
    with torch.no_grad():
        assert torch.equal(FedOpenMatchNet.from_pretrained(tmp_path / "fom")(_probe())[1], fom(_probe())[1])


def test_open_set_net_saving_and_loading_errors_are_one_line(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"^OpenSetNet.save_pretrained: the extractor is a torch Sequential"):
        OpenSetNet(nn.Sequential(nn.Flatten()), 2, feature_dim=64).save_pretrained(tmp_path / "seq")

    class Local(UserExtractor):
        pass

    with pytest.raises(ValueError, match="defined inside a function"):
        OpenSetNet(Local(2), 2, feature_dim=8).save_pretrained(tmp_path / "local")
    OpenSetNet(UserExtractor(2), 2, feature_dim=8).save_pretrained(tmp_path / "net")
    cfg = tmp_path / "net" / "config.json"
    config = json.loads(cfg.read_text())
    cfg.write_text(json.dumps({**config, "extractor_class": "not_a_user_pkg.nets:UserExtractor"}))
    with pytest.raises(ValueError, match=r"^OpenSetNet.from_pretrained: the extractor class .* is not imported"):
        OpenSetNet.from_pretrained(tmp_path / "net")
    assert isinstance(OpenSetNet.from_pretrained(tmp_path / "net", extractor_classes=[UserExtractor]), OpenSetNet)
    with pytest.raises(ValueError, match=r"^OpenSetNet.from_pretrained: cannot import the extractor class"):
        OpenSetNet.from_pretrained(tmp_path / "net", trust_extractor_class=True)
    cfg.write_text(json.dumps({**config, "extractor_init": {"width": 5}}))
    with pytest.raises(ValueError, match=r"^OpenSetNet.from_pretrained: the rebuilt extractor .* does not match"):
        OpenSetNet.from_pretrained(tmp_path / "net")
    cfg.write_text(json.dumps({**config, "extractor_init": {"depth": 5}}))
    with pytest.raises(ValueError, match=r"^OpenSetNet.from_pretrained: cannot rebuild the extractor"):
        OpenSetNet.from_pretrained(tmp_path / "net")
