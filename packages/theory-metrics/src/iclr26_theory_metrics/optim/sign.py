r"""Sign descent with momentum (Signum, Bernstein et al. 2018) with coupled or decoupled weight decay.

Per parameter tensor :math:`w` with gradient :math:`g`, step size :math:`\eta`, momentum :math:`\beta`, weight
decay :math:`\lambda`:

* coupled (``Signum``): :math:`g \leftarrow g + \lambda w`; :math:`m \leftarrow \beta m + (1-\beta) g`;
  :math:`w \leftarrow w - \eta\,\operatorname{sign}(m)`.
* decoupled (``SignumW``): :math:`m \leftarrow \beta m + (1-\beta) g`;
  :math:`w \leftarrow (1 - \eta\lambda) w - \eta\,\operatorname{sign}(m)`.

With :math:`\beta = 0` these are SignGD, exactly the updates of the paper's Theorems 3.4 (coupled,
:math:`W_{t+1} = W_t - \eta\,\operatorname{sign}(\nabla + \lambda W_t)`) and 3.3 (decoupled,
:math:`W_{t+1} = W_t - \eta(\operatorname{sign}(\nabla) + \lambda W_t)`). SignGD is Adam/AdamW with
:math:`\beta_1 = \beta_2 = \epsilon = 0`. The EMA factor :math:`(1-\beta)` does not change the sign, so the
heavy-ball buffer :math:`m \leftarrow \beta m + g` gives identical steps. ``sign(0) = 0``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch.optim import Optimizer

from iclr26_theory_metrics.optim._checks import check_hyper

__all__ = ["Signum", "SignumW"]


class Signum(Optimizer):
    """Signum / SignGD; ``decoupled_weight_decay=True`` gives SignumW (see the module docstring).

    Args:
        params: Parameters or parameter groups.
        lr: Step size :math:`\\eta > 0`.
        momentum: :math:`\\beta \\in [0, 1)`; 0 is SignGD.
        weight_decay: :math:`\\lambda \\ge 0`.
        decoupled_weight_decay: Shrink the weights by :math:`(1-\\eta\\lambda)` instead of adding
            :math:`\\lambda w` to the gradient.
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        *,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_hyper("lr", lr, 0.0)
        if lr == 0:
            raise ValueError("invalid lr 0: expected a finite number > 0")
        check_hyper("momentum", momentum, 0.0, 1.0)
        check_hyper("weight_decay", weight_decay, 0.0)
        defaults = dict(
            lr=lr, momentum=momentum, weight_decay=weight_decay, decoupled_weight_decay=decoupled_weight_decay
        )
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, beta, wd = group["lr"], group["momentum"], group["weight_decay"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError("Signum does not support sparse gradients")
                g = p.grad
                if wd != 0 and not decoupled:
                    g = g.add(p, alpha=wd)
                if beta != 0:
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = torch.zeros_like(p)
                    buf = state["momentum_buffer"]
                    buf.mul_(beta).add_(g, alpha=1.0 - beta)
                    g = buf
                if wd != 0 and decoupled:
                    p.mul_(1.0 - lr * wd)
                p.add_(torch.sign(g), alpha=-lr)
        return loss


class SignumW(Signum):
    """Signum with decoupled weight decay: :math:`w \\leftarrow (1-\\eta\\lambda)w - \\eta\\,\\mathrm{sign}(m)`."""

    def __init__(
        self,
        params: Iterable[torch.Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(params, lr, momentum, weight_decay, decoupled_weight_decay=True)
