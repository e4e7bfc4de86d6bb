r"""SGD with momentum and decoupled weight decay (SGDW, Loshchilov & Hutter 2019), the paper's Theorem 3.1.

:math:`V_{t+1} = \beta V_t + \nabla L(W_t)` (with :math:`V_0 = 0`, so :math:`V_1 = \nabla`, as torch's SGD),
:math:`W_{t+1} = (1 - \eta\lambda) W_t - \eta V_{t+1}`.

``torch.optim.SGD`` is the coupled form of Theorem 3.2: :math:`V_{t+1} = \beta V_t + \nabla + \lambda W_t`,
:math:`W_{t+1} = W_t - \eta V_{t+1}`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch.optim import Optimizer

from iclr26_theory_metrics.optim._checks import check_hyper

__all__ = ["SGDW"]


class SGDW(Optimizer):
    """SGD with heavy-ball momentum and decoupled weight decay (see the module docstring).

    Args:
        params: Parameters or parameter groups.
        lr: Step size :math:`\\eta > 0`.
        momentum: :math:`\\beta \\in [0, 1)`.
        weight_decay: :math:`\\lambda \\ge 0` (applied as :math:`W \\leftarrow (1-\\eta\\lambda)W`).
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-2,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
    ) -> None:
        check_hyper("lr", lr, 0.0)
        if lr == 0:
            raise ValueError("invalid lr 0: expected a finite number > 0")
        check_hyper("momentum", momentum, 0.0, 1.0)
        check_hyper("weight_decay", weight_decay, 0.0)
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, beta, wd = group["lr"], group["momentum"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError("SGDW does not support sparse gradients")
                d = p.grad
                if beta != 0:
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = d.clone()
                    else:
                        state["momentum_buffer"].mul_(beta).add_(d)
                    d = state["momentum_buffer"]
                if wd != 0:
                    p.mul_(1.0 - lr * wd)
                p.add_(d, alpha=-lr)
        return loss
