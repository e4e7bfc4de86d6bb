"""A small CNN classifier trained in-repo: class accuracy of samples and features for an FID-style score.

No hub weights are available offline, so instead of Inception features we use the penultimate layer of
this classifier, trained on the same real images. The resulting Fréchet distance is **not** Inception FID
and is not comparable with published FIDs; it ranks samplers on this data set only.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["SmallCNN", "accuracy", "features", "train_classifier"]


class SmallCNN(nn.Module):
    """Conv(32)–Conv(64, stride 2)–Conv(64, stride 2)–GAP–Linear(F)–Linear(K) for ``[B, C, S, S]`` images."""

    def __init__(self, in_channels: int, num_classes: int, features: int = 64) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(in_channels, 32, 3, padding=1),
            nn.SiLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1),
            nn.SiLU(),
            nn.Conv2d(64, 64, 3, stride=2, padding=1),
            nn.SiLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(64, features),
            nn.SiLU(),
        )
        self.head = nn.Linear(features, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate features ``[B, F]``."""
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, K]``."""
        return self.head(self.body(x))


def train_classifier(
    x: torch.Tensor,
    y: torch.Tensor,
    num_classes: int,
    *,
    epochs: int = 10,
    batch_size: int = 128,
    lr: float = 2e-3,
    generator: torch.Generator | None = None,
) -> SmallCNN:
    """Train :class:`SmallCNN` on images ``x`` ``[N, C, S, S]`` in [−1, 1] and labels ``y`` ``[N]``."""
    model = SmallCNN(x.shape[1], num_classes).to(x.device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    n = x.shape[0]
    model.train()
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator).to(x.device)
        for i in range(0, n, batch_size):
            idx = order[i : i + batch_size]
            xb = x[idx] + 0.05 * torch.randn(x[idx].shape, generator=generator).to(x.device)
            loss = nn.functional.cross_entropy(model(xb), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    model.eval()
    return model


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 512) -> float:
    """Top-1 accuracy of ``model`` on ``x`` ``[N, C, S, S]``, ``y`` ``[N]``."""
    correct = 0
    for i in range(0, x.shape[0], batch_size):
        correct += int((model(x[i : i + batch_size]).argmax(-1) == y[i : i + batch_size]).sum())
    return correct / max(1, x.shape[0])


@torch.no_grad()
def features(model: SmallCNN, x: torch.Tensor, batch_size: int = 512) -> torch.Tensor:
    """Penultimate features of ``x`` in batches: ``[N, F]``."""
    return torch.cat([model.features(x[i : i + batch_size]) for i in range(0, x.shape[0], batch_size)])
