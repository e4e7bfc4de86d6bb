"""Reusable blocks of the federated package: open-set losses and the two-head networks."""

from iclr26_federated.nn.losses import (
    binary_entropy_loss,
    logit_adjust,
    logit_consistency_loss,
    masked_cross_entropy,
    ova_loss,
    ova_pseudo_label_loss,
    softmax_consistency_loss,
)
from iclr26_federated.nn.metrics import OpenSetMetrics, open_set_metrics, openmatch_predict
from iclr26_federated.nn.models import OpenSetNet, build_model

__all__ = [
    "OpenSetMetrics",
    "OpenSetNet",
    "open_set_metrics",
    "openmatch_predict",
    "binary_entropy_loss",
    "build_model",
    "logit_adjust",
    "logit_consistency_loss",
    "masked_cross_entropy",
    "ova_loss",
    "ova_pseudo_label_loss",
    "softmax_consistency_loss",
]
