"""The measurement path of ``richness``: streamed D_LR = the library function, the controlled planted sets."""

from __future__ import annotations

import math

import torch

from iclr26_theory_metrics import richness
from iclr26_theory_metrics.methods.richness.config import PRESETS
from iclr26_theory_metrics.methods.richness.model import build_vgg
from iclr26_theory_metrics.methods.richness.train import control_study, measure
from iclr26_theory_metrics.nn import MLP


def test_measure_streams_the_same_d_lr_as_the_library() -> None:
    torch.manual_seed(0)
    model = MLP(12, 4, width=2).double()  # float64, so batching cannot change the features
    x, y = torch.randn(50, 12, dtype=torch.float64), torch.randint(0, 4, (50,))
    m, feats = measure(model, x, y, batch_size=7)
    with torch.no_grad():
        h = model.features(x)
        expected = richness(h, model.classifier(h))
        acc = float((model(x).argmax(1) == y).double().mean())
    assert math.isclose(m["d_lr"], expected, abs_tol=1e-10)
    assert math.isclose(m["acc"], acc) and feats.shape == (50, 16)


def test_control_separates_planted_rich_from_random_features() -> None:
    c = control_study(PRESETS["smoke"], seed=0)
    assert c["rich"]["d_lr"] < 0.15
    assert abs(c["lazy"]["d_lr"] - c["lazy_expected"]) < 0.1
    assert c["lazy"]["d_lr"] - c["rich"]["d_lr"] > 0.5 * c["lazy_expected"]


def test_vgg_with_and_without_batch_norm() -> None:
    cfg = PRESETS["smoke"]
    with_bn, without = (build_vgg(cfg, 1, 10, batch_norm=bn) for bn in (True, False))
    assert sum(isinstance(m, torch.nn.BatchNorm2d) for m in with_bn.modules()) == 8
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in without.modules())
    x = torch.randn(3, 1, 8, 8)
    assert with_bn.features(x).shape == without.features(x).shape == (3, 8 * cfg.vgg_width)
