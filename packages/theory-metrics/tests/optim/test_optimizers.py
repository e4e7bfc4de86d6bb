"""Each optimizer against its update rule on hand-computed steps, the Wᵀ1 invariants of the paper, the
Adam/AdamW/SignGD equivalences of the interpolation, the factory and argument checks."""

from __future__ import annotations

import pytest
import torch

from iclr26_theory_metrics.optim import OPTIMIZER_NAMES, SGDW, InterpolatedAdamW, Signum, SignumW, make_optimizer
from iclr26_theory_metrics.optim.factory import COUPLED


def _step(opt: torch.optim.Optimizer, p: torch.Tensor, grad: list[float]) -> None:
    p.grad = torch.tensor(grad, dtype=p.dtype)
    opt.step()


def _close(p: torch.Tensor, expected: list[float], tol: float = 1e-12) -> None:
    assert torch.allclose(p.detach(), torch.tensor(expected, dtype=p.dtype), rtol=0, atol=tol), p.tolist()


def test_signum_coupled_hand_step() -> None:
    # sign(g + λw) = sign([0.3+0.5, 0.1-1.0, -0.2+0.25]) = [1, -1, 1]
    p = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
    _step(Signum([p], lr=0.1, weight_decay=0.5), p, [0.3, 0.1, -0.2])
    _close(p, [0.9, -1.9, 0.4])


def test_signumw_decoupled_hand_step() -> None:
    # (1 - ηλ) w - η sign(g) = 0.95 w - 0.1 [1, 1, -1]
    p = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
    _step(SignumW([p], lr=0.1, weight_decay=0.5), p, [0.3, 0.1, -0.2])
    _close(p, [0.85, -2.0, 0.575])


def test_signum_momentum_hand_steps() -> None:
    # β = 0.5: m1 = 0.5 g1 = [0.5, -0.5]; m2 = 0.5 m1 + 0.5 g2 = [0.25 - 0.2, -0.25 + 0.05] -> sign [1, -1]
    # although g2 = [-0.4, 0.1] alone has sign [-1, 1]
    p = torch.tensor([0.0, 0.0], dtype=torch.float64, requires_grad=True)
    opt = Signum([p], lr=0.1, momentum=0.5)
    _step(opt, p, [1.0, -1.0])
    _close(p, [-0.1, 0.1])
    _step(opt, p, [-0.4, 0.1])
    _close(p, [-0.2, 0.2])


def test_sign_of_zero_is_zero() -> None:
    p = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    _step(Signum([p], lr=0.1), p, [0.0, 1.0])
    _close(p, [1.0, 1.9])


def test_sgdw_hand_steps() -> None:
    # V1 = g1; W1 = 0.99 W0 - 0.1 V1; V2 = 0.9 V1 + g2; W2 = 0.99 W1 - 0.1 V2
    p = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    opt = SGDW([p], lr=0.1, momentum=0.9, weight_decay=0.1)
    _step(opt, p, [0.5, 0.5])
    _close(p, [0.94, -2.03])
    _step(opt, p, [1.0, 0.0])
    _close(p, [0.94 * 0.99 - 0.145, -2.03 * 0.99 - 0.045])


def test_interpolated_adamw_hand_step() -> None:
    # ρ = 0.5, λ = 0.2: g = 0.3 + 0.1·1 = 0.4; first Adam step = -η g/(|g| + ε); decoupled factor 1 - 0.1·0.1
    p = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    _step(InterpolatedAdamW([p], lr=0.1, weight_decay=0.2, coupled_share=0.5, eps=1e-8), p, [0.3])
    _close(p, [0.99 - 0.1 * 0.4 / (0.4 + 1e-8)])


@pytest.mark.parametrize(("share", "reference"), [(1.0, torch.optim.Adam), (0.0, torch.optim.AdamW)])
def test_interpolation_endpoints_are_adam_and_adamw(share: float, reference: type) -> None:
    gen = torch.Generator().manual_seed(0)
    init = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    grads = [torch.randn(4, 3, generator=gen, dtype=torch.float64) for _ in range(6)]
    a = init.clone().requires_grad_(True)
    b = init.clone().requires_grad_(True)
    ours = InterpolatedAdamW([a], lr=0.01, betas=(0.9, 0.99), weight_decay=0.3, coupled_share=share)
    ref = reference([b], lr=0.01, betas=(0.9, 0.99), weight_decay=0.3)
    for g in grads:
        a.grad, b.grad = g.clone(), g.clone()
        ours.step()
        ref.step()
    assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("share", "sign_cls"), [(1.0, Signum), (0.0, SignumW)])
def test_adam_with_zero_betas_and_eps_is_signgd(share: float, sign_cls: type) -> None:
    gen = torch.Generator().manual_seed(1)
    init = torch.randn(5, generator=gen, dtype=torch.float64)
    a = init.clone().requires_grad_(True)
    b = init.clone().requires_grad_(True)
    adam = InterpolatedAdamW([a], lr=0.05, betas=(0.0, 0.0), eps=0.0, weight_decay=0.2, coupled_share=share)
    sign = sign_cls([b], lr=0.05, weight_decay=0.2)
    for _ in range(4):
        g = torch.randn(5, generator=gen, dtype=torch.float64)
        a.grad, b.grad = g.clone(), g.clone()
        adam.step()
        sign.step()
    assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)


def _ce_problem(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    k, p, n = 5, 7, 40
    h = torch.randn(n, p, generator=gen, dtype=torch.float64)
    y = torch.randint(0, k, (n,), generator=gen)
    w = torch.randn(k, p, generator=gen, dtype=torch.float64).requires_grad_(True)
    return h, y, w


def _train(opt_name: str, steps: int, **kw: float) -> list[torch.Tensor]:
    h, y, w = _ce_problem()
    opt = make_optimizer(opt_name, [w], **kw)
    sums = [w.detach().sum(0).clone()]
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(h @ w.T, y).backward()
        assert w.grad is not None and float(w.grad.sum(0).abs().max()) < 1e-12  # 1ᵀ ∇_W L_CE = 0
        opt.step()
        sums.append(w.detach().sum(0).clone())
    return sums


@pytest.mark.parametrize("name", ["sgd", "sgdw"])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_gradient_steps_without_wd_keep_row_sum(name: str, momentum: float) -> None:
    sums = _train(name, 10, lr=0.5, momentum=momentum, weight_decay=0.0)
    for s in sums[1:]:
        assert torch.allclose(s, sums[0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["sgd", "sgdw"])
def test_sgd_wd_shrinks_row_sum_by_exactly_one_minus_eta_lambda(name: str) -> None:
    lr, wd = 0.3, 0.2
    sums = _train(name, 8, lr=lr, weight_decay=wd)
    for before, after in zip(sums[:-1], sums[1:], strict=True):
        assert torch.allclose(after, (1 - lr * wd) * before, rtol=1e-12, atol=1e-14)


def test_sign_updates_move_row_sum_even_without_wd() -> None:
    """The paper's mechanism: the sign non-linearity breaks 1ᵀ(update) = 0, so Wᵀ1 drifts without any WD."""
    sums = _train("signum", 5, lr=0.1, weight_decay=0.0)
    assert float((sums[-1] - sums[0]).abs().max()) > 0.05


def test_factory_builds_every_optimizer() -> None:
    expected = {
        "sgd": torch.optim.SGD,
        "sgdw": SGDW,
        "adam": torch.optim.Adam,
        "adamw": torch.optim.AdamW,
        "signum": Signum,
        "signumw": SignumW,
    }
    assert set(OPTIMIZER_NAMES) == set(expected) == set(COUPLED)
    for name, cls in expected.items():
        opt = make_optimizer(name, [torch.zeros(2, requires_grad=True)], lr=0.1, momentum=0.5, weight_decay=0.01)
        assert type(opt) is cls
    with pytest.raises(ValueError, match="unknown optimizer 'lion'"):
        make_optimizer("lion", [torch.zeros(2, requires_grad=True)], lr=0.1)


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda p: Signum(p, lr=0.0), "invalid lr"),
        (lambda p: Signum(p, lr=0.1, momentum=1.0), "invalid momentum"),
        (lambda p: SignumW(p, lr=0.1, weight_decay=-1.0), "invalid weight_decay"),
        (lambda p: SGDW(p, lr=-0.1), "invalid lr"),
        (lambda p: SGDW(p, lr=0.1, momentum=float("nan")), "invalid momentum"),
        (lambda p: InterpolatedAdamW(p, coupled_share=1.5), "invalid coupled_share"),
        (lambda p: InterpolatedAdamW(p, betas=(0.9, 1.0)), "invalid beta2"),
    ],
)
def test_bad_hyperparameters(factory, message: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=message):
        factory([torch.zeros(2, requires_grad=True)])
