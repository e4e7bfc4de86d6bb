"""The model, optimizer and learning-rate schedule of one training run of the optimizer study (Zhao et al.,
ICLR 2026, experiments section: ResNet9/VGG9, the six optimizers, the learning rate ×0.1 at 1/3 and 2/3 of
training as in Papyan et al.). The networks themselves live in :mod:`iclr26_theory_metrics.nn`, the
optimizers in :mod:`iclr26_theory_metrics.optim`.
"""

from __future__ import annotations

import torch

from iclr26_theory_metrics.methods.neural_collapse.config import NeuralCollapseConfig, RunSpec
from iclr26_theory_metrics.nn.models import FeatureClassifier, build_model
from iclr26_theory_metrics.optim.factory import make_optimizer

__all__ = ["build_run_model", "build_run_optimizer"]


def build_run_model(
    cfg: NeuralCollapseConfig, image_shape: tuple[int, int, int], num_classes: int
) -> FeatureClassifier:
    """``cfg.model`` (ResNet9, VGG9 or MLP of base width ``cfg.width``) for images ``(C, H, W)``; the caller seeds
    torch first so that every run starts from the same weights."""
    return build_model(cfg.model, image_shape, num_classes, width=cfg.width, bias=cfg.classifier_bias)


def build_run_optimizer(
    spec: RunSpec, model: torch.nn.Module, cfg: NeuralCollapseConfig
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.MultiStepLR]:
    """The optimizer of ``spec`` (weight decay on every parameter) and its step schedule: ×0.1 at epochs
    ``epochs // 3`` and ``2 * epochs // 3`` when ``cfg.lr_decay`` (call ``step()`` once per epoch)."""
    opt = make_optimizer(
        spec.optimizer,
        model.parameters(),
        lr=spec.lr,
        momentum=spec.momentum,
        weight_decay=spec.weight_decay,
        beta2=cfg.beta2,
    )
    milestones = [m for m in (cfg.epochs // 3, (2 * cfg.epochs) // 3) if m > 0] if cfg.lr_decay else []
    return opt, torch.optim.lr_scheduler.MultiStepLR(opt, milestones=milestones, gamma=0.1)
