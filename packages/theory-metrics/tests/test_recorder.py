"""measure_model equals the metrics of the explicitly computed features; NCRecorder logs rows to a run dir."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch

from iclr26_shared.runs import RunDir
from iclr26_theory_metrics import neural_collapse_metrics
from iclr26_theory_metrics.nn import FeatureClassifier, build_model
from iclr26_theory_metrics.ops.neural_collapse import METRIC_KEYS
from iclr26_theory_metrics.recorder import NCRecorder, measure_model


@dataclass(frozen=True)
class _Cfg:
    a: int = 1


def _setup() -> tuple[FeatureClassifier, tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    model = build_model("mlp", (1, 4, 4), 3, width=1)
    x = torch.randn(30, 1, 4, 4)
    y = torch.arange(3).repeat(10)
    return model, (x, y), (torch.randn(9, 1, 4, 4), torch.arange(3).repeat(3))


def test_measure_model_matches_direct_metrics() -> None:
    model, train, test = _setup()
    m = measure_model(model, train, test, num_classes=3, device=torch.device("cpu"), batch_size=7)
    with torch.no_grad():
        h, ht = model.features(train[0]), model.features(test[0])
        direct = neural_collapse_metrics(
            h, train[1], model.classifier.weight, bias=model.classifier.bias, eval_features=ht
        )
        logits = model(train[0])
        loss = float(torch.nn.functional.cross_entropy(logits.double(), train[1]))
        test_acc = float((model(test[0]).argmax(1) == test[1]).double().mean())
    for key in METRIC_KEYS:
        assert m[key] == pytest.approx(direct[key], rel=1e-5, abs=1e-7), key
    assert m["train_loss"] == pytest.approx(loss, rel=1e-6)
    assert m["test_acc"] == pytest.approx(test_acc)


def test_recorder_logs_rows_and_handles_divergence(tmp_path) -> None:  # noqa: ANN001
    model, train, test = _setup()
    run = RunDir.create(tmp_path, "nc-test", _Cfg(), seed=0)
    rec = NCRecorder(run, {"optimizer": "sgd"}, num_classes=3, device=torch.device("cpu"))
    rec.record(0, 0, model, train, test, lr_now=0.1)
    with torch.no_grad():
        model.classifier.weight[0, 0] = math.nan
    row = rec.record(1, 1, model, train, None)
    rows = run.read_metrics()
    assert [r["step"] for r in rows] == [0, 1]
    assert rows[0]["optimizer"] == "sgd" and rows[0]["lr_now"] == 0.1 and set(METRIC_KEYS) <= set(rows[0])
    assert math.isnan(row["nc1"]) and len(rec.history) == 2
