"""Build the study's optimizers by name with one set of hyperparameters (learning rate, momentum/β₁, WD).

| name     | update                                    | class                      |
|----------|-------------------------------------------|----------------------------|
| sgd      | SGD, heavy-ball momentum, coupled WD       | ``torch.optim.SGD``        |
| sgdw     | SGD, heavy-ball momentum, decoupled WD     | :class:`SGDW`              |
| adam     | Adam (β₁ = momentum), coupled WD           | ``torch.optim.Adam``       |
| adamw    | Adam (β₁ = momentum), decoupled WD         | ``torch.optim.AdamW``      |
| signum   | sign of the momentum, coupled WD           | :class:`Signum`            |
| signumw  | sign of the momentum, decoupled WD         | :class:`SignumW`           |
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from iclr26_theory_metrics.optim.sgdw import SGDW
from iclr26_theory_metrics.optim.sign import Signum, SignumW

__all__ = ["COUPLED", "OPTIMIZER_NAMES", "make_optimizer"]

#: The six optimizers of the paper's study.
OPTIMIZER_NAMES: tuple[str, ...] = ("sgd", "sgdw", "adam", "adamw", "signum", "signumw")
#: Whether each optimizer couples its weight decay to the gradient.
COUPLED: dict[str, bool] = {
    "sgd": True,
    "sgdw": False,
    "adam": True,
    "adamw": False,
    "signum": True,
    "signumw": False,
}


def make_optimizer(
    name: str,
    params: Iterable[torch.Tensor] | Iterable[dict[str, Any]],
    *,
    lr: float,
    momentum: float = 0.0,
    weight_decay: float = 0.0,
    beta2: float = 0.999,
    eps: float = 1e-8,
) -> torch.optim.Optimizer:
    """The optimizer ``name`` (one of :data:`OPTIMIZER_NAMES`); ``momentum`` is β₁ for the Adam family."""
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    if name == "sgdw":
        return SGDW(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, betas=(momentum, beta2), eps=eps, weight_decay=weight_decay)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=(momentum, beta2), eps=eps, weight_decay=weight_decay)
    if name == "signum":
        return Signum(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    if name == "signumw":
        return SignumW(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    raise ValueError(f"unknown optimizer {name!r}; choose from {', '.join(OPTIMIZER_NAMES)}")
