"""Per-epoch recording of the neural-collapse metrics of a training run into the run directory.

:func:`measure_model` streams the training set through the model once (eval mode) to accumulate class means,
the within-class covariance (:class:`~iclr26_theory_metrics.ops.NCAccumulator`), loss and accuracy, then the
test set once for the test accuracy and NC4 (agreement of the classifier with the nearest *training* class
mean on test features, as in the paper). :class:`NCRecorder` logs each measurement as one ``metrics.jsonl``
row (with the run's tags) and keeps the history for plots.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch

from iclr26_theory_metrics.nn.models import FeatureClassifier
from iclr26_theory_metrics.ops.neural_collapse import (
    METRIC_KEYS,
    NC3Form,
    NC4Counter,
    NC4Form,
    NCAccumulator,
    Scale,
    nc_metrics_from_stats,
)

__all__ = ["NCRecorder", "measure_model"]


@torch.no_grad()
def measure_model(
    model: FeatureClassifier,
    train: tuple[torch.Tensor, torch.Tensor],
    test: tuple[torch.Tensor, torch.Tensor] | None,
    *,
    num_classes: int,
    device: torch.device,
    batch_size: int = 1024,
    nc0_squared: bool = False,
    nc4_form: NC4Form = "agreement",
    scale: Scale = "paper",
    nc3_form: NC3Form = "alignment",
) -> dict[str, float]:
    """NC metrics (:data:`METRIC_KEYS`) plus ``train_loss``, ``train_acc``, ``test_acc`` of ``model``.

    ``train``/``test`` are ``(x [N, C, H, W], y [N])`` on any device; batches move to ``device``. When any
    parameter is non-finite (a diverged run) every value is NaN.
    """
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        return {k: math.nan for k in (*METRIC_KEYS, "train_loss", "train_acc", "test_acc")}
    was_training = model.training
    model.eval()
    acc = NCAccumulator(num_classes, model.feature_dim, device=device)
    loss_sum, correct = 0.0, 0
    x_tr, y_tr = train
    for start in range(0, x_tr.shape[0], batch_size):
        xb = x_tr[start : start + batch_size].to(device)
        yb = y_tr[start : start + batch_size].to(device)
        h = model.features(xb)
        logits = model.classifier(h)
        if not bool(torch.isfinite(h).all()):
            model.train(was_training)
            return {k: math.nan for k in (*METRIC_KEYS, "train_loss", "train_acc", "test_acc")}
        acc.update(h, yb)
        loss_sum += float(torch.nn.functional.cross_entropy(logits.double(), yb, reduction="sum"))
        correct += int((logits.argmax(1) == yb).sum())
    stats = acc.finalize()
    weight = model.classifier.weight.detach()
    bias = None if model.classifier.bias is None else model.classifier.bias.detach()
    counter = NC4Counter(weight, stats.means, bias)
    test_acc = math.nan
    if test is not None and test[0].shape[0] > 0:
        x_te, y_te = test
        hits = 0
        for start in range(0, x_te.shape[0], batch_size):
            xb = x_te[start : start + batch_size].to(device)
            h = model.features(xb)
            counter.update(h)
            hits += int((model.classifier(h).argmax(1).cpu() == y_te[start : start + batch_size]).sum())
        test_acc = hits / x_te.shape[0]
    else:  # NC4 on the training features
        for start in range(0, x_tr.shape[0], batch_size):
            counter.update(model.features(x_tr[start : start + batch_size].to(device)))
    model.train(was_training)
    metrics = nc_metrics_from_stats(
        stats,
        weight,
        nc4_agreement=counter.agreement,
        nc0_squared=nc0_squared,
        nc4_form=nc4_form,
        scale=scale,
        nc3_form=nc3_form,
    )
    n = x_tr.shape[0]
    return {**metrics, "train_loss": loss_sum / n, "train_acc": correct / n, "test_acc": test_acc}


class NCRecorder:
    """Logs every NC metric of a training run per epoch to a run directory (``metrics.jsonl``).

    Args:
        run: A :class:`~iclr26_shared.runs.RunDir` (anything with ``log(step, **metrics)``), or None to only
            keep the history in memory.
        tags: Values added to every row (e.g. optimizer name and hyperparameters).
        measure_kwargs: Passed to :func:`measure_model` (``num_classes``, ``device``, conventions).
    """

    def __init__(self, run: Any | None, tags: Mapping[str, Any], **measure_kwargs: Any) -> None:
        self.run = run
        self.tags = dict(tags)
        self.measure_kwargs = measure_kwargs
        self.history: list[dict[str, Any]] = []

    def record(
        self,
        step: int,
        epoch: int,
        model: FeatureClassifier,
        train: tuple[torch.Tensor, torch.Tensor],
        test: tuple[torch.Tensor, torch.Tensor] | None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Measure ``model`` and log ``{**tags, "epoch": epoch, **extra, **metrics}`` at ``step``; returns the row."""
        metrics = measure_model(model, train, test, **self.measure_kwargs)
        row = {**self.tags, "epoch": int(epoch), **extra, **metrics}
        if self.run is not None:
            self.run.log(step, **row)
        self.history.append(row)
        return row
