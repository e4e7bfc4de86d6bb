"""Small ResNet9- and VGG9-style networks (and an MLP) sized for 2 CPU cores.

Every model is a :class:`FeatureClassifier`: ``features(x) -> h [B, p]`` (the penultimate features the
neural-collapse metrics use) followed by ``classifier``, a ``Linear(p, K)`` whose weight is the paper's
:math:`W_L \\in \\mathbb R^{K\\times p}`. Inputs are ``[B, C, H, W]`` images of any size (global average
pooling before the classifier), ``C`` = 1 (grey) or 3 (RGB).

* ``resnet9``: the DAWNBench ResNet9 layout (prep conv; conv+pool+residual block; conv+pool; conv+pool+residual
  block; global pool) with widths ``w, 2w, 4w, 8w`` (the original has w = 64); p = 8w.
* ``vgg9``: VGG-style 3×3 conv + BatchNorm + ReLU stacks ``[w, M, 2w, M, 4w, 4w, M, 8w, 8w, M, 8w, 8w]``
  (M = 2×2 max-pool, skipped once the map is 1×1), global pool; p = 8w.
* ``mlp``: flatten, two hidden ReLU layers of 8w units; p = 8w.

Each concrete network has :class:`huggingface_hub.PyTorchModelHubMixin`: ``save_pretrained(dir)`` writes
safetensors + its ``__init__`` arguments as ``config.json``, ``ResNet9.from_pretrained(dir)`` reads them
back from a local folder.
"""

from __future__ import annotations

import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

__all__ = ["MLP", "MODEL_NAMES", "FeatureClassifier", "ResNet9", "VGG9", "build_model"]

MODEL_NAMES: tuple[str, ...] = ("resnet9", "vgg9", "mlp")


class FeatureClassifier(nn.Module):
    """Base class: ``forward(x) = classifier(features(x))``; subclasses set ``body`` and ``classifier``."""

    body: nn.Module
    classifier: nn.Linear

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate features ``[B, p]``."""
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, K]``."""
        return self.classifier(self.features(x))

    @property
    def feature_dim(self) -> int:
        """p."""
        return self.classifier.in_features


def _conv_bn(c_in: int, c_out: int, batch_norm: bool = True) -> nn.Sequential:
    if not batch_norm:  # conv with a bias instead of the BatchNorm's shift
        return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(inplace=True))
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class _Residual(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.block = nn.Sequential(_conv_bn(c, c), _conv_bn(c, c))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x)


class _MaybePool(nn.Module):
    """2×2 max-pool while the map is at least 2×2 (small inputs such as 8×8 digits run out of resolution)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.max_pool2d(x, 2) if min(x.shape[-2:]) >= 2 else x


class ResNet9(FeatureClassifier, PyTorchModelHubMixin):
    """ResNet9 (DAWNBench layout) with base width ``width``; p = 8·width."""

    def __init__(self, in_channels: int, num_classes: int, width: int = 8, bias: bool = True) -> None:
        super().__init__()
        w = width
        self.body = nn.Sequential(
            _conv_bn(in_channels, w),
            _conv_bn(w, 2 * w),
            _MaybePool(),
            _Residual(2 * w),
            _conv_bn(2 * w, 4 * w),
            _MaybePool(),
            _conv_bn(4 * w, 8 * w),
            _MaybePool(),
            _Residual(8 * w),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.classifier = nn.Linear(8 * w, num_classes, bias=bias)


class VGG9(FeatureClassifier, PyTorchModelHubMixin):
    """VGG-style network with 8 conv layers + the linear classifier; p = 8·width (``batch_norm=False``: every
    BatchNorm dropped, the convs get biases)."""

    def __init__(
        self, in_channels: int, num_classes: int, width: int = 8, bias: bool = True, *, batch_norm: bool = True
    ) -> None:
        super().__init__()
        w = width
        plan: list[int | str] = [w, "M", 2 * w, "M", 4 * w, 4 * w, "M", 8 * w, 8 * w, "M", 8 * w, 8 * w]
        layers: list[nn.Module] = []
        c = in_channels
        for item in plan:
            if item == "M":
                layers.append(_MaybePool())
            else:
                assert isinstance(item, int)
                layers.append(_conv_bn(c, item, batch_norm))
                c = item
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.body = nn.Sequential(*layers)
        self.classifier = nn.Linear(8 * w, num_classes, bias=bias)


class MLP(FeatureClassifier, PyTorchModelHubMixin):
    """Flatten → Linear(d, 8w) → ReLU → Linear(8w, 8w) → ReLU → classifier; p = 8·width."""

    def __init__(self, in_features: int, num_classes: int, width: int = 8, bias: bool = True) -> None:
        super().__init__()
        hidden = 8 * width
        self.body = nn.Sequential(
            nn.Flatten(), nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU()
        )
        self.classifier = nn.Linear(hidden, num_classes, bias=bias)


def build_model(
    name: str, image_shape: tuple[int, int, int], num_classes: int, *, width: int = 8, bias: bool = True
) -> FeatureClassifier:
    """Model ``name`` (one of :data:`MODEL_NAMES`) for images ``(C, H, W)`` and ``num_classes`` classes."""
    c, h, w = image_shape
    if name == "resnet9":
        return ResNet9(c, num_classes, width, bias)
    if name == "vgg9":
        return VGG9(c, num_classes, width, bias)
    if name == "mlp":
        return MLP(c * h * w, num_classes, width, bias)
    raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)}")
