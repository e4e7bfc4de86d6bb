r"""Adam ↔ AdamW interpolation: a share :math:`\rho` of the weight decay is coupled, the rest decoupled.

With total weight decay :math:`\lambda`, :math:`\lambda_c = \rho\lambda` and :math:`\lambda_d = (1-\rho)\lambda`:

.. math::
    g_t &= \nabla L(w_{t-1}) + \lambda_c w_{t-1}, \quad
    m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \quad v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2, \\
    w_t &= (1 - \eta\lambda_d)\, w_{t-1} - \eta\, \frac{m_t/(1-\beta_1^t)}{\sqrt{v_t/(1-\beta_2^t)} + \epsilon}.

:math:`\rho = 1` is ``torch.optim.Adam(weight_decay=λ)``, :math:`\rho = 0` is ``torch.optim.AdamW(weight_decay=λ)``
(the paper's ablation fixes :math:`\lambda` = 5e-4 and varies the coupled share). With
:math:`\beta_1 = \beta_2 = \epsilon = 0` the step is SignGD.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch.optim import Optimizer

from iclr26_theory_metrics.optim._checks import check_hyper

__all__ = ["InterpolatedAdamW"]


class InterpolatedAdamW(Optimizer):
    """Adam whose weight decay is split into a coupled share ``coupled_share`` and a decoupled rest.

    Args:
        params: Parameters or parameter groups.
        lr: Step size :math:`\\eta > 0`.
        betas: :math:`(\\beta_1, \\beta_2)`, each in [0, 1).
        eps: :math:`\\epsilon \\ge 0`.
        weight_decay: Total :math:`\\lambda \\ge 0`.
        coupled_share: :math:`\\rho \\in [0, 1]`: 1 is Adam, 0 is AdamW.
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        coupled_share: float = 0.5,
    ) -> None:
        check_hyper("lr", lr, 0.0)
        if lr == 0:
            raise ValueError("invalid lr 0: expected a finite number > 0")
        check_hyper("beta1", betas[0], 0.0, 1.0)
        check_hyper("beta2", betas[1], 0.0, 1.0)
        check_hyper("eps", eps, 0.0)
        check_hyper("weight_decay", weight_decay, 0.0)
        check_hyper("coupled_share", coupled_share, 0.0, 1.0, high_open=False)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, coupled_share=coupled_share)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
            wd_c = group["weight_decay"] * group["coupled_share"]
            wd_d = group["weight_decay"] - wd_c
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError("InterpolatedAdamW does not support sparse gradients")
                g = p.grad if wd_c == 0 else p.grad.add(p, alpha=wd_c)
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(b1).add_(g, alpha=1.0 - b1)
                v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
                denom = (v / (1.0 - b2**t)).sqrt_().add_(eps)
                if wd_d != 0:
                    p.mul_(1.0 - lr * wd_d)
                p.addcdiv_(m, denom, value=-lr / (1.0 - b1**t))
        return loss
