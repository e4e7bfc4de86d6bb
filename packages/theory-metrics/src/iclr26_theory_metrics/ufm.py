r"""The unconstrained-features model (UFM) of the paper's theorems, simulated with the real optimizers.

The UFM treats the last-layer features :math:`H \in \mathbb R^{N\times p}` as free variables (``features="free"``,
trained by the same optimizer and weight decay as :math:`W`) or fixes them at a neural-collapse solution
(``features="etf"``: every sample of class k sits at the simplex-ETF vertex
:math:`h_k = s\sqrt{K/(K-1)}\,(e_k - \frac1K 1_K)` in the first K coordinates). The loss is the mean
cross-entropy of the logits :math:`H W^\top` (no bias), and the tracked quantity is

.. math:: \alpha_t = \tfrac1K \lVert W_t^\top 1_K \rVert_2^2 .

Because :math:`1^\top \nabla_W L_{CE} = 0` (softmax minus one-hot sums to zero), only weight decay and the
optimizer's non-linearity move :math:`W^\top 1`. The closed forms below follow:

* SGDW (Thm 3.1): :math:`u_{t+1} = (1-\eta\lambda) u_t` with :math:`u = W^\top 1`, so
  :math:`\alpha_t = (1-\eta\lambda)^{2t}\alpha_0` (the momentum buffer's row sum stays 0).
* SGD, coupled (Thm 3.2): :math:`v_{t+1} = \beta v_t + \lambda u_t`, :math:`u_{t+1} = u_t - \eta v_{t+1}`, so
  :math:`u_t = c_t u_0` and :math:`\alpha_t = c_t^2 \alpha_0` (decays iff :math:`\eta\lambda < 2(1+\beta)`).
  Both recurrences hold for any start (any W_0, any features) because only :math:`1^\top\nabla_W L = 0` is used;
  :func:`sgd_alpha_rate` gives the per-step factor ρ (α_t ∝ ρ^{2t}): :math:`|1-\eta\lambda|` decoupled, the
  spectral radius of :math:`z^2 - (1+\beta-\eta\lambda)z + \beta` coupled. So for
  :math:`2 < \eta\lambda < 2(1+\beta)` coupled SGD still decays while SGDW diverges.
* SignGD, decoupled, ETF features, :math:`W_0 = 0`, :math:`p = K` (Thm 3.3): every column of
  :math:`\operatorname{sign}(\nabla)` is :math:`J - 2I`'s, summing to :math:`K-2`, so
  :math:`u_{t+1} = (1-\eta\lambda)u_t - \eta(K-2)1` and
  :math:`\alpha_t = \frac{(K-2)^2}{\lambda^2}(1-(1-\eta\lambda)^t)^2 \uparrow \frac{(K-2)^2}{\lambda^2}`.
  This closed form needs the ETF **aligned with the coordinate axes** (``features="etf"``): sign(·) acts
  entry-wise, so the result depends on the basis. Under a random rotation of the same ETF
  (``feature_rotation_seed``) the sign pattern of the gradient flips from step to step, α_t is not monotone and
  settles far below (K−2)²/λ² (about 8 instead of 256 for K = 10, λ = 0.5), but it still does not vanish: the
  basis-free part of the statement is that α_t stays bounded away from 0 (and below
  :func:`signgd_alpha_bound` = pK/λ², since every entry of W stays in [−1/λ, 1/λ]).
* SignGD, coupled (Thm 3.4): no closed form; :math:`\alpha_t` is non-monotone and tends to 0 when
  :math:`\eta_t \to 0` (``lr_schedule="inverse"``: :math:`\eta_t = \eta_0/(1 + t/\tau)`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

from iclr26_theory_metrics.optim.factory import OPTIMIZER_NAMES, make_optimizer

__all__ = [
    "UFMTrace",
    "empirical_rate",
    "max_relative_error",
    "random_rotation",
    "etf_class_means",
    "sgd_alpha_rate",
    "sgd_alpha_theory",
    "signgd_alpha_bound",
    "signgd_decoupled_alpha_theory",
    "signgd_decoupled_limit",
    "simulate_ufm",
    "ufm_alpha",
    "ufm_gradients",
]

Features = Literal["etf", "free"]
LRSchedule = Literal["constant", "inverse"]


@dataclass(frozen=True)
class UFMTrace:
    """One UFM simulation.

    Attributes:
        alpha: :math:`\\alpha_t` for ``t = 0..T`` (``T + 1`` values).
        loss: Cross-entropy for ``t = 0..T``.
        lr: Step size used at steps ``1..T``.
        accuracy: Final training accuracy.
    """

    alpha: list[float]
    loss: list[float]
    lr: list[float]
    accuracy: float


def ufm_alpha(weights: torch.Tensor) -> float:
    """:math:`\\alpha = \\frac1K\\lVert W^\\top 1_K\\rVert_2^2` for ``weights [K, p]``."""
    row_sum = weights.detach().to(torch.float64).sum(dim=0)
    return float((row_sum * row_sum).sum()) / weights.shape[0]


def etf_class_means(
    num_classes: int, dim: int, scale: float = 1.0, *, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """Simplex-ETF vertices ``[K, p]`` in the first K coordinates: rows :math:`s\\sqrt{K/(K-1)}(e_k - 1/K)`."""
    if num_classes < 2 or dim < num_classes:
        raise ValueError(f"need K >= 2 and p >= K for a canonical simplex ETF, got K = {num_classes}, p = {dim}")
    k = num_classes
    out = torch.zeros(k, dim, dtype=dtype)
    out[:, :k] = (torch.eye(k, dtype=dtype) - 1.0 / k) * (scale * math.sqrt(k / (k - 1)))
    return out


def ufm_gradients(h: torch.Tensor, w: torch.Tensor, labels: torch.Tensor) -> tuple[float, torch.Tensor, torch.Tensor]:
    """Loss and analytic gradients of the UFM objective :math:`L = \\frac1N\\sum_i \\mathrm{CE}(W h_i, y_i)`.

    With :math:`G = (\\mathrm{softmax}(HW^\\top) - Y)/N` ``[N, K]``: :math:`\\nabla_W L = G^\\top H` ``[K, p]`` and
    :math:`\\nabla_H L = G W` ``[N, p]``. Every row of G sums to 0, hence :math:`1^\\top \\nabla_W L = 0`. (Equal
    to autograd's; several times faster for these tiny matrices.)
    """
    logp = torch.log_softmax(h @ w.T, dim=1)
    onehot = torch.nn.functional.one_hot(labels, w.shape[0]).to(logp.dtype)
    n = labels.shape[0]
    g = (logp.exp() - onehot) / n
    return float(-(logp * onehot).sum() / n), g.T @ h, g @ w


def simulate_ufm(
    optimizer: str,
    *,
    num_classes: int = 10,
    dim: int | None = None,
    n_per_class: int = 5,
    lr: float = 0.01,
    momentum: float = 0.0,
    weight_decay: float = 0.01,
    steps: int = 1000,
    features: Features = "free",
    feature_scale: float = 1.0,
    init_std: float = 0.1,
    lr_schedule: LRSchedule = "constant",
    lr_tau: float = 100.0,
    feature_rotation_seed: int | None = None,
    seed: int = 0,
    device: torch.device | str = "cpu",
) -> UFMTrace:
    """Train the UFM for ``steps`` full-batch steps with ``optimizer`` (a name of
    :data:`~iclr26_theory_metrics.optim.OPTIMIZER_NAMES`) and record :math:`\\alpha_t`.

    ``dim`` defaults to K. ``init_std = 0`` starts from :math:`W_0 = 0` (as Theorems 3.3–3.4); otherwise W (and
    free features) start i.i.d. normal with that standard deviation. ``feature_rotation_seed`` rotates the fixed
    ETF features by a random orthogonal matrix (:func:`random_rotation`; ``features="etf"`` only). All
    computation is float64.
    """
    if optimizer not in OPTIMIZER_NAMES:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose from {', '.join(OPTIMIZER_NAMES)}")
    if features not in ("etf", "free"):
        raise ValueError(f"features must be 'etf' or 'free', got {features!r}")
    if lr_schedule not in ("constant", "inverse"):
        raise ValueError(f"lr_schedule must be 'constant' or 'inverse', got {lr_schedule!r}")
    if feature_rotation_seed is not None and features != "etf":
        raise ValueError("feature_rotation_seed applies to features='etf' only")
    if steps < 1 or n_per_class < 1 or num_classes < 2:
        raise ValueError("need steps >= 1, n_per_class >= 1 and num_classes >= 2")
    k = num_classes
    p = k if dim is None else dim
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(k).repeat_interleave(n_per_class).to(dev)
    w = (torch.randn(k, p, generator=gen, dtype=torch.float64) * init_std).to(dev)
    params = [w]
    if features == "etf":
        means = etf_class_means(k, p, feature_scale)
        if feature_rotation_seed is not None:
            means = means @ random_rotation(p, feature_rotation_seed).T
        h = means[labels.cpu()].to(dev)
    else:
        std = init_std if init_std > 0 else 1.0
        h = (torch.randn(k * n_per_class, p, generator=gen, dtype=torch.float64) * std).to(dev)
        params.append(h)
    opt = make_optimizer(optimizer, params, lr=lr, momentum=momentum, weight_decay=weight_decay)

    with torch.no_grad():
        loss0, grad_w, grad_h = ufm_gradients(h, w, labels)
        alphas, losses, lrs = [ufm_alpha(w)], [loss0], []
        for t in range(steps):
            step_lr = lr if lr_schedule == "constant" else lr / (1.0 + t / lr_tau)
            for group in opt.param_groups:
                group["lr"] = step_lr
            w.grad = grad_w
            if features == "free":
                h.grad = grad_h
            opt.step()
            lrs.append(step_lr)
            loss_t, grad_w, grad_h = ufm_gradients(h, w, labels)
            alphas.append(ufm_alpha(w))
            losses.append(loss_t)
    with torch.no_grad():
        acc = float(((h @ w.T).argmax(dim=1) == labels).double().mean())
    return UFMTrace(alpha=alphas, loss=losses, lr=lrs, accuracy=acc)


def sgd_alpha_theory(
    alpha0: float, *, lr: float, weight_decay: float, momentum: float, steps: int, coupled: bool
) -> list[float]:
    """:math:`\\alpha_t`, ``t = 0..steps``, predicted for SGD (``coupled``, Thm 3.2) or SGDW (Thm 3.1)."""
    out = [alpha0]
    c, v = 1.0, 0.0  # u_t = c_t u_0 and the momentum buffer's row sum v_t = d_t u_0
    for _ in range(steps):
        if coupled:
            v = momentum * v + weight_decay * c
            c = c - lr * v
        else:
            c = (1.0 - lr * weight_decay) * c
        out.append(c * c * alpha0)
    return out


def signgd_decoupled_limit(num_classes: int, weight_decay: float) -> float:
    """Thm 3.3's limit :math:`(K-2)^2/\\lambda^2`."""
    return (num_classes - 2) ** 2 / weight_decay**2


def signgd_decoupled_alpha_theory(*, num_classes: int, lr: float, weight_decay: float, steps: int) -> list[float]:
    """:math:`\\alpha_t = \\frac{(K-2)^2}{\\lambda^2}(1-(1-\\eta\\lambda)^t)^2`, ``t = 0..steps`` (ETF features,
    :math:`W_0 = 0`, p = K)."""
    limit = signgd_decoupled_limit(num_classes, weight_decay)
    return [limit * (1.0 - (1.0 - lr * weight_decay) ** t) ** 2 for t in range(steps + 1)]


def max_relative_error(sim: list[float], theory: list[float], *, floor: float) -> float:
    """max_t |sim_t − theory_t| / theory_t over the steps where theory_t ≥ ``floor`` (below it float64 rounding
    of Wᵀ1, about 1e-16·|W|, dominates)."""
    errs = [abs(s - t) / t for s, t in zip(sim, theory, strict=True) if t >= floor]
    return max(errs) if errs else 0.0


def random_rotation(dim: int, seed: int) -> torch.Tensor:
    r"""A Haar-random orthogonal ``[dim, dim]`` float64 matrix (QR of a Gaussian matrix with the signs of R's
    diagonal folded into Q)."""
    gen = torch.Generator().manual_seed(seed)
    q, r = torch.linalg.qr(torch.randn(dim, dim, generator=gen, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


def sgd_alpha_rate(*, lr: float, weight_decay: float, momentum: float, coupled: bool) -> float:
    r"""The per-step factor ρ of :math:`W_t^\top 1` under SGD (α_t ∝ ρ^{2t}): :math:`|1-\eta\lambda|` for decoupled
    WD (Thm 3.1: < 1 iff 0 < ηλ < 2), else the spectral radius of the momentum recurrence, the larger root modulus
    of :math:`z^2 - (1+\beta-\eta\lambda)z + \beta` (Thm 3.2: < 1 iff 0 < ηλ < 2(1+β))."""
    if not coupled:
        return abs(1.0 - lr * weight_decay)
    b = 1.0 + momentum - lr * weight_decay
    disc = b * b - 4.0 * momentum
    if disc < 0:
        return math.sqrt(momentum)
    return max(abs(b + math.sqrt(disc)), abs(b - math.sqrt(disc))) / 2.0


def empirical_rate(alpha: list[float], *, floor: float = 0.0) -> float:
    r"""Per-step factor ρ read off a trace α_t ∝ ρ^{2t} (oscillating or not): the ratio of the largest α in the
    last and the first quarter of the steps where α > ``floor``, to the power 1/(2·distance)."""
    pts = [(t, a) for t, a in enumerate(alpha) if a > floor]
    if len(pts) < 8:
        return math.nan
    w = len(pts) // 4
    t0, a0 = max(pts[:w], key=lambda p: p[1])
    t1, a1 = max(pts[-w:], key=lambda p: p[1])
    if t1 <= t0:
        return math.nan
    return (a1 / a0) ** (1.0 / (2 * (t1 - t0)))


def signgd_alpha_bound(num_classes: int, dim: int, weight_decay: float) -> float:
    r"""Upper bound pK/λ² on α under SignGD with decoupled WD from W_0 = 0 (every entry of W stays in [−1/λ, 1/λ])."""
    return dim * num_classes / weight_decay**2
