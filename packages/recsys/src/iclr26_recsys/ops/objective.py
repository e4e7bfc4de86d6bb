"""The DEQL objective itself, computed three independent ways, and its minimisation by gradients.

``f(W) = E_Δ ‖A ⊙ (R − (Δ⊙R)W)‖²_F + λ‖W‖²_F`` with keep-mask ``Δ_uj ~ Bernoulli(1−p)`` i.i.d. and
emphasis ``A_ui = a`` where ``Δ_ui = 0`` (dropped), ``b`` where ``Δ_ui = 1`` (kept).

* :func:`deql_objective` — the exact expectation by conditional moments (differentiable, ``O(m n²)``):
  for entry ``(u, i)`` and ``Δ_ui = δ``, the residual ``r = R_ui − δR_uiW_ii − Σ_{j≠i} Δ_uj R_uj W_ji``
  has mean ``R_ui − δR_uiW_ii − (1−p)(Z_ui − R_uiW_ii)`` (``Z = RW``) and variance
  ``p(1−p)(Y_ui − R_ui²W_ii²)`` (``Y = R^{⊙2} W^{⊙2}``), so
  ``f = Σ_ui p a² E[r²|δ=0] + (1−p) b² E[r²|δ=1]``. It does not use the closed form's ``H``/``V``.
* :func:`deql_objective_enumerated` — the expectation by enumerating all ``2^n`` masks of every user
  (tiny ``n`` only; the ground truth for tests).
* :func:`deql_objective_monte_carlo` — an unbiased sample average over random masks.
* :func:`minimize_deql_objective` — gradient-based minimisation of :func:`deql_objective` (gradient
  descent with step ``1/L`` or Nesterov's accelerated variant), for the claim that the closed form is the minimiser.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch

__all__ = [
    "MinimizeResult",
    "deql_objective",
    "deql_objective_enumerated",
    "deql_objective_monte_carlo",
    "minimize_deql_objective",
]


def _check(R: torch.Tensor, W: torch.Tensor, p: float) -> None:
    if R.ndim != 2 or W.ndim != 2 or W.shape != (R.shape[1], R.shape[1]):
        raise ValueError(f"R must be [m, n] and W [n, n]; got R {tuple(R.shape)}, W {tuple(W.shape)}")
    if not 0.0 <= p < 1.0:
        raise ValueError(f"p = {p!r}: must lie in [0, 1)")


def deql_objective(R: torch.Tensor, W: torch.Tensor, p: float, a: float, b: float, l2: float = 0.0) -> torch.Tensor:
    """Exact ``E_Δ ‖A⊙(R − (Δ⊙R)W)‖²_F + λ‖W‖²_F`` (scalar tensor, differentiable in ``W``).

    ``R``: ``[m, n]`` dense; ``W``: ``[n, n]``.
    """
    _check(R, W, p)
    q = 1.0 - p
    wd = torch.diagonal(W)  # [n]
    z_off = R @ W - R * wd[None, :]  # Σ_{j≠i} R_uj W_ji
    var = p * q * ((R * R) @ (W * W) - (R * wd[None, :]) ** 2)
    mean_dropped = R - q * z_off  # Δ_ui = 0
    mean_kept = R - R * wd[None, :] - q * z_off  # Δ_ui = 1
    f = p * a * a * (mean_dropped**2 + var).sum() + q * b * b * (mean_kept**2 + var).sum()
    if l2:
        f = f + l2 * (W * W).sum()
    return f


def deql_objective_enumerated(
    R: torch.Tensor, W: torch.Tensor, p: float, a: float, b: float, l2: float = 0.0
) -> torch.Tensor:
    """The expectation by summing over all ``2^n`` keep-masks of each user (``n ≤ 12``)."""
    _check(R, W, p)
    m, n = R.shape
    if n > 12:
        raise ValueError(f"enumeration over 2^n masks needs n <= 12, got n = {n}")
    masks = torch.tensor(list(itertools.product((0.0, 1.0), repeat=n)), dtype=R.dtype, device=R.device)  # [2^n, n]
    kept = masks.sum(1)
    prob = (1.0 - p) ** kept * p ** (n - kept)  # [2^n]
    emph = torch.where(masks.bool(), torch.as_tensor(b, dtype=R.dtype), torch.as_tensor(a, dtype=R.dtype))
    total = torch.zeros((), dtype=R.dtype, device=R.device)
    for u in range(m):
        x = masks * R[u][None, :]  # [2^n, n]
        resid = emph * (R[u][None, :] - x @ W)
        total = total + (prob * (resid**2).sum(1)).sum()
    return total + l2 * (W * W).sum()


def deql_objective_monte_carlo(
    R: torch.Tensor,
    W: torch.Tensor,
    p: float,
    a: float,
    b: float,
    l2: float = 0.0,
    *,
    samples: int = 1000,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Sample mean of ``‖A⊙(R − (Δ⊙R)W)‖²_F`` over ``samples`` random keep-masks, plus ``λ‖W‖²``."""
    _check(R, W, p)
    total = torch.zeros((), dtype=R.dtype, device=R.device)
    for _ in range(samples):
        keep = (torch.rand(R.shape, generator=generator, dtype=R.dtype, device=R.device) >= p).to(R.dtype)
        emph = a + (b - a) * keep
        total = total + ((emph * (R - (keep * R) @ W)) ** 2).sum()
    return total / samples + l2 * (W * W).sum()


@dataclass(frozen=True)
class MinimizeResult:
    """Result of :func:`minimize_deql_objective`.

    Attributes:
        W: The minimiser found, ``[n, n]``.
        objective: ``f(W)`` at the end.
        steps: Iterations run.
        history: ``f`` after each logged iteration.
    """

    W: torch.Tensor
    objective: float
    steps: int
    history: list[float]


def _largest_hessian_eigenvalue(
    loss_fn: Callable[[torch.Tensor], torch.Tensor],
    shape: tuple[int, int],
    dtype: torch.dtype,
    device: torch.device,
    iters: int = 30,
) -> float:
    """Power iteration with Hessian-vector products (the objective is quadratic: ``∇f(v) − ∇f(0) = Hv``)."""
    zero = torch.zeros(shape, dtype=dtype, device=device, requires_grad=True)
    (g0,) = torch.autograd.grad(loss_fn(zero), zero)
    v = torch.randn(shape, dtype=dtype, device=device, generator=torch.Generator(device=device).manual_seed(0))
    v = v / v.norm()
    lam = 0.0
    for _ in range(iters):
        x = v.clone().requires_grad_(True)
        (gx,) = torch.autograd.grad(loss_fn(x), x)
        hv = gx - g0
        lam = float((hv * v).sum())
        v = hv / hv.norm()
    return lam


def minimize_deql_objective(
    R: torch.Tensor,
    p: float,
    a: float,
    b: float,
    l2: float = 0.0,
    *,
    zero_diag: bool = False,
    method: Literal["gd", "nesterov"] = "gd",
    steps: int = 500,
    tol: float = 1e-8,
) -> MinimizeResult:
    """Minimise :func:`deql_objective` over ``W`` from ``W = 0`` with gradients only.

    ``method="gd"``: gradient descent ``W ← W − ∇f(W)/L`` (``L`` the largest Hessian eigenvalue, by power
    iteration with Hessian-vector products); ``"nesterov"``: Nesterov's accelerated variant with the same
    step (for ill-conditioned item subsets). No ``torch.optim``: its import pulls in ``torch._dynamo``.
    With ``zero_diag`` the diagonal is held at 0 (the gradient is masked). Stops after ``steps`` iterations
    or when the (masked) gradient norm falls below ``tol`` times its value at the first iterate.
    ``R``: ``[m, n]`` dense.
    """
    n = R.shape[1]
    mask = torch.ones(n, n, dtype=R.dtype, device=R.device)
    if zero_diag:
        mask.fill_diagonal_(0.0)

    def loss_fn(W: torch.Tensor) -> torch.Tensor:
        return deql_objective(R, W * mask, p, a, b, l2)

    if method not in ("gd", "nesterov"):
        raise ValueError(f"method = {method!r}: choose 'gd' or 'nesterov'")
    lr = 1.0 / _largest_hessian_eigenvalue(loss_fn, (n, n), R.dtype, R.device)
    W = torch.zeros(n, n, dtype=R.dtype, device=R.device)
    Y = W.clone()
    history: list[float] = []
    step, g0 = 0, 0.0
    for step in range(1, steps + 1):
        x = (Y if method == "nesterov" else W).clone().requires_grad_(True)
        loss = loss_fn(x)
        (grad,) = torch.autograd.grad(loss, x)
        W_next = x.detach() - lr * grad * mask
        if method == "nesterov":  # Nesterov's accelerated gradient for an L-smooth convex objective
            Y = W_next + (step - 1.0) / (step + 2.0) * (W_next - W)
        W = W_next
        history.append(float(loss.detach()))
        gnorm = float((grad * mask).norm())
        if step == 1:
            g0 = gnorm
        if gnorm <= tol * g0:
            break
    final = (W * mask).detach()
    obj = float(loss_fn(final))
    if not math.isfinite(obj):
        raise FloatingPointError("the DEQL objective diverged during minimisation")
    return MinimizeResult(W=final, objective=obj, steps=step, history=history)
