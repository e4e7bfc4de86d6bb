"""The models and optimizers of ``richness`` (Nam et al., ICLR 2026): the grokking transformer trained with
full-batch AdamW (the paper's modular-addition experiment, after Nanda et al., 2023), and the image MLP trained
either fully ("rich") or with only its last layer ("lazy": the random features of the initialisation are kept,
the paper's lazy-vs-rich comparison). The networks live in :mod:`iclr26_theory_metrics.nn`.
"""

from __future__ import annotations

from typing import Literal

import torch

from iclr26_theory_metrics.methods.richness.config import RichnessConfig
from iclr26_theory_metrics.nn.models import MLP, VGG9
from iclr26_theory_metrics.nn.transformer import ModularTransformer

__all__ = [
    "build_grokking_model",
    "build_grokking_optimizer",
    "build_image_model",
    "build_image_optimizer",
    "build_vgg",
]

Regime = Literal["lazy", "rich"]


def build_grokking_model(cfg: RichnessConfig) -> ModularTransformer:
    """The 2-layer transformer for ``[a, b, =]`` (vocabulary P + 1, P classes, MLP width 4·dim); seed first."""
    return ModularTransformer(
        cfg.modulus + 1, cfg.modulus, dim=cfg.dim, heads=cfg.heads, mlp_dim=4 * cfg.dim, layers=cfg.layers
    )


def build_grokking_optimizer(model: torch.nn.Module, cfg: RichnessConfig) -> torch.optim.AdamW:
    """AdamW with decoupled weight decay on every parameter, β = (0.9, 0.98) (Nanda et al.'s grokking setup)."""
    return torch.optim.AdamW(model.parameters(), lr=cfg.grok_lr, weight_decay=cfg.grok_weight_decay, betas=(0.9, 0.98))


def build_image_model(cfg: RichnessConfig, in_features: int, num_classes: int, regime: Regime) -> MLP:
    """The MLP (p = 8·width); for ``regime="lazy"`` every parameter except the last layer is frozen."""
    model = MLP(in_features, num_classes, cfg.width)
    if regime == "lazy":
        for p in model.body.parameters():
            p.requires_grad_(False)
    return model


def build_image_optimizer(model: torch.nn.Module, cfg: RichnessConfig, weight_decay: float = 0.0) -> torch.optim.SGD:
    """SGD with momentum 0.9 (and ``weight_decay``) on the trainable parameters (the classifier only, for the
    lazy regime)."""
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.SGD(params, lr=cfg.image_lr, momentum=0.9, weight_decay=weight_decay)


def build_vgg(cfg: RichnessConfig, in_channels: int, num_classes: int, *, batch_norm: bool) -> VGG9:
    """The small VGG of the batch-norm comparison (the paper: VGG16 on CIFAR-100 with and without BN)."""
    return VGG9(in_channels, num_classes, cfg.vgg_width, batch_norm=batch_norm)
