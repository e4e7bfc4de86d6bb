"""Closed forms of the linear autoencoders EASE, EDLAE and DEQL (Guo et al., ICLR 2026: the decoupled
closed form of the expected quadratic loss and its Miller-theorem algorithm; the official code's ``models/model.py``).

Notation: ``R ∈ R^{m×n}`` (users × items, non-negative), ``G = RᵀR`` (``[n, n]``), ``g = diag(G)``,
predictions ``R̂ = R W`` with ``W ∈ R^{n×n}`` (the estimators' ``B_``).

* EASE (Steck 2019): ``min ‖R − RW‖²_F + λ‖W‖²_F`` s.t. ``diag(W) = 0``;
  ``P = (G + λI)⁻¹``, ``W = I − P·diagMat(1 ⊘ diag P)``.
* EDLAE (Steck 2020, full emphasis, b = 0): ``Λ = p/(1−p)·diagMat(g) + λI``, ``P = (G + Λ)⁻¹``,
  ``W = I − P·diagMat(1 ⊘ diag P)``.
* DEQL (Guo et al., ICLR 2026): ``f(W) = E_Δ ‖A ⊙ (R − (Δ⊙R)W)‖²_F (+ λ‖W‖²_F)`` with keep-mask
  ``Δ ~ Bernoulli(1−p)`` and emphasis ``A_ui = a`` (dropped) / ``b`` (kept). It decouples by column:
  ``W_{:,i} = (H^{(i)})⁻¹ V_{:,i}`` with ``H^{(i)} = H0 + E1[:, i] e_iᵀ + e_i E2[i, :]`` where
  ``H0 = G0 ⊙ G (+ λI)``, ``E1 = Ec ⊙ G``, ``E2 = E1 − diagMat(diag E1)``, ``V = Vc ⊙ G`` and the
  coefficient matrices ``G0, Ec, Vc`` hold one value off the diagonal and one on it
  (:func:`deql_coefficients`).

Three DEQL solvers that agree to rounding:

* :func:`naive_deql_weights`: one dense solve per column, ``O(n⁴)`` (the reference for tests);
* :func:`deql_weights_rank1`: the authors' algorithm — ``H0⁻¹``, ``S1 = H0⁻¹V``, ``S2 = H0⁻¹E1``
  and two Sherman–Morrison rank-1 updates per column (Miller's theorem), vectorised over columns;
* :func:`deql_structured_form`: the same two rank-1 updates carried out symbolically. Because
  ``H0 = c·(G + D) + λI`` with ``c = (1−p)²(pa² + (1−p)b²)`` and ``D = p/(1−p)·diagMat(g)``, both
  ``S1`` and ``S2`` are ``diagMat(α) + H0⁻¹ diagMat(β)``; so is ``W``:
  ``W = diagMat(γ) + H0⁻¹ diagMat(δ)`` with ``γ, δ ∈ R^n`` computed in ``O(n)`` from ``diag H0⁻¹``.
  With an eigendecomposition ``G + D = Q diag(e) Qᵀ`` (:class:`GramFactorization`) every
  ``(b, a, λ)`` of a sweep reuses the one factorisation of its ``p``.

EASE and EDLAE have the same form: ``W = I − P·diagMat(1 ⊘ diag P)``, i.e. ``γ = 1, δ = −1 ⊘ diag P``.
All functions take and return ``torch`` tensors (any float dtype, any device).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = [
    "DEQLCoefficients",
    "GramFactorization",
    "LinearForm",
    "NotPositiveDefiniteError",
    "deql_coefficients",
    "deql_form_from_inverse_diag",
    "deql_structured_form",
    "deql_system",
    "deql_weights_rank1",
    "deql_weights_structured",
    "ease_weights",
    "edlae_weights",
    "naive_deql_weights",
    "naive_ease_weights",
    "spd_inverse",
]


class NotPositiveDefiniteError(ValueError):
    """A system matrix that must be positive definite is not (e.g. an item without interactions and λ = 0)."""


def _check_gram(G: torch.Tensor) -> None:
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(f"G must be a square [n, n] matrix, got shape {tuple(G.shape)}")
    if not G.is_floating_point():
        raise ValueError(f"G must be a floating-point tensor, got {G.dtype}")


def _check_p(p: float) -> None:
    if not 0.0 <= p < 1.0:
        raise ValueError(f"p = {p!r}: the dropout probability must lie in [0, 1)")


def spd_inverse(A: torch.Tensor, *, what: str = "matrix") -> torch.Tensor:
    """Inverse of a symmetric positive-definite ``[n, n]`` matrix by Cholesky (raises when not SPD)."""
    L, info = torch.linalg.cholesky_ex(A)
    if int(info.max()) > 0:
        raise NotPositiveDefiniteError(
            f"{what} is not positive definite (Cholesky failed at column {int(info.max()) - 1}); "
            "use l2 > 0 or drop items without interactions"
        )
    return torch.cholesky_inverse(L)


# --------------------------------------------------------------------------------------------------
# EASE / EDLAE
# --------------------------------------------------------------------------------------------------


def edlae_weights(G: torch.Tensor, p: float, l2: float = 0.0) -> torch.Tensor:
    """EDLAE (b = 0, diagonal constrained to 0): ``P = (G + p/(1−p)·diagMat(g) + λI)⁻¹``,
    ``W = I − P·diagMat(1 ⊘ diag P)``. ``G``: ``[n, n]``; returns ``W``: ``[n, n]`` with zero diagonal."""
    _check_gram(G)
    _check_p(p)
    g = torch.diagonal(G)
    K = G + torch.diag(p / (1.0 - p) * g + l2)
    P = spd_inverse(K, what="G + Λ")
    W = -P / torch.diagonal(P)[None, :]
    W.fill_diagonal_(0.0)
    return W


def ease_weights(G: torch.Tensor, l2: float) -> torch.Tensor:
    """EASE: ``P = (G + λI)⁻¹``, ``W_ij = −P_ij / P_jj``, ``W_jj = 0``. ``G``: ``[n, n]`` → ``[n, n]``."""
    return edlae_weights(G, 0.0, l2)


def naive_ease_weights(G: torch.Tensor, l2: float) -> torch.Tensor:
    """EASE by one constrained least-squares solve per column (reference for tests, ``O(n⁴)``):
    ``W_{-i,i} = (G + λI)_{-i,-i}⁻¹ G_{-i,i}``, ``W_ii = 0``."""
    _check_gram(G)
    n = G.shape[0]
    K = G + l2 * torch.eye(n, dtype=G.dtype, device=G.device)
    W = torch.zeros_like(G)
    for i in range(n):
        keep = torch.arange(n, device=G.device) != i
        W[keep, i] = torch.linalg.solve(K[keep][:, keep], G[keep, i])
    return W


# --------------------------------------------------------------------------------------------------
# DEQL: coefficients and the explicit system
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DEQLCoefficients:
    """The scalar entries of ``G0``, ``Ec`` and ``Vc`` (off-diagonal and diagonal), as in the paper's
    decoupled Hessian and the official ``EDLAE_b_geq_0`` models.

    With ``q = 1 − p`` and ``κ = p a² + q b²``:
    ``G0_jk = q²p a² + q³b² = q²κ``, ``G0_jj = qp a² + q²b² = qκ``;
    ``Ec_jk = q²p(b² − a²)``, ``Ec_jj = qp(b² − a²)``; ``Vc_jk = qp a² + q²b² = qκ``, ``Vc_jj = q b²``.
    """

    h_off: float
    h_diag: float
    e_off: float
    e_diag: float
    v_off: float
    v_diag: float


def deql_coefficients(p: float, a: float, b: float) -> DEQLCoefficients:
    """The DEQL coefficients for dropout ``p`` and emphases ``a`` (dropped) and ``b`` (kept)."""
    _check_p(p)
    q = 1.0 - p
    kappa = p * a * a + q * b * b
    return DEQLCoefficients(
        h_off=q * q * kappa,
        h_diag=q * kappa,
        e_off=q * q * p * (b * b - a * a),
        e_diag=q * p * (b * b - a * a),
        v_off=q * kappa,
        v_diag=q * b * b,
    )


def _structured(G: torch.Tensor, off: float, diag: float) -> torch.Tensor:
    """``C ⊙ G`` for ``C`` with ``off`` off the diagonal and ``diag`` on it."""
    out = off * G
    out.diagonal().copy_(diag * torch.diagonal(G))
    return out


def deql_system(
    G: torch.Tensor, p: float, a: float, b: float, l2: float = 0.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(H0, E1, E2, V)``, each ``[n, n]``; ``H0`` includes ``l2·I`` (DEQL's L2 variant)."""
    _check_gram(G)
    c = deql_coefficients(p, a, b)
    H0 = _structured(G, c.h_off, c.h_diag)
    if l2:
        H0.diagonal().add_(l2)
    E1 = _structured(G, c.e_off, c.e_diag)
    E2 = E1.clone()
    E2.fill_diagonal_(0.0)
    V = _structured(G, c.v_off, c.v_diag)
    return H0, E1, E2, V


def _check_deql(p: float, a: float, b: float, l2: float, zero_diag: bool) -> None:
    """Validate DEQL hyper-parameters; raise ValueError naming the parameter."""
    _check_p(p)
    for name, value in (("a", a), ("b", b), ("l2", l2)):
        if not (value >= 0.0 and value < float("inf")):
            raise ValueError(f"{name} = {value!r}: must be a finite number >= 0")
    if deql_coefficients(p, a, b).h_off <= 0.0:
        raise ValueError(
            f"DEQL with p={p}, a={a}, b={b} puts zero weight on every entry ((1−p)²(p a² + (1−p) b²) = 0); "
            "use b > 0, or p > 0 with a > 0"
        )
    if b == 0.0 and l2 == 0.0 and not zero_diag:
        raise ValueError(
            "DEQL with b = 0, l2 = 0 and zero_diag = False has no unique solution (W_ii is undetermined); "
            "use b > 0, l2 > 0 or zero_diag = True (the EDLAE solution)"
        )


def naive_deql_weights(
    G: torch.Tensor, p: float, a: float, b: float, l2: float = 0.0, *, zero_diag: bool = False
) -> torch.Tensor:
    """Reference DEQL solver: for each column ``i`` build ``H^{(i)}`` and solve ``H^{(i)} w = V_{:,i}``.

    With ``zero_diag`` the constraint ``w_i = 0`` is imposed by solving the reduced system on the other
    items (``H^{(i)}_{-i,-i} w_{-i} = V_{-i,i}``), not by the Lagrange projection of the fast paths.
    ``O(n⁴)``; for tests and small ``n``. ``G``: ``[n, n]`` → ``W``: ``[n, n]``.
    """
    _check_deql(p, a, b, l2, zero_diag)
    H0, E1, E2, V = deql_system(G, p, a, b, l2)
    n = G.shape[0]
    W = torch.zeros_like(G)
    idx = torch.arange(n, device=G.device)
    for i in range(n):
        H = H0.clone()
        H[:, i] += E1[:, i]
        H[i, :] += E2[i, :]
        if zero_diag:
            keep = idx != i
            W[keep, i] = torch.linalg.solve(H[keep][:, keep], V[keep, i])
        else:
            W[:, i] = torch.linalg.solve(H, V[:, i])
    return W


def deql_weights_rank1(
    G: torch.Tensor, p: float, a: float, b: float, l2: float = 0.0, *, zero_diag: bool = False
) -> torch.Tensor:
    """The authors' ``O(n³)`` algorithm (the paper's two rank-1 updates by Miller's theorem), the per-column
    loop vectorised over columns.

    ``S1 = H0⁻¹V``, ``S2 = H0⁻¹E1``; column ``i``:
    ``s = S1[:,i] − S1[i,i]/(1 + S2[i,i])·S2[:,i]`` (adds ``E1[:,i]e_iᵀ``),
    ``t = H0⁻¹[:,i] − H0⁻¹[i,i]/(1 + S2[i,i])·S2[:,i]``,
    ``W[:,i] = s − (E2[i,:]·s)/(1 + E2[:,i]·t)·t`` (adds ``e_iE2[i,:]``).

    With ``zero_diag`` the authors project with ``c = (H^{(i)})⁻¹e_i``: ``W[:,i] −= W[i,i]/c_i · c``. Under
    ``w_i = 0`` both updates (which touch only row and column ``i``) drop out of the objective, so this
    equals ``W[:,i] = S1[:,i] − S1[i,i]/H0⁻¹[i,i] · H0⁻¹[:,i]``, which we use: identical where ``H^{(i)}``
    is invertible and still defined at ``b = 0`` (where ``H^{(i)}`` is singular and the projection divides
    by zero).
    ``G``: ``[n, n]`` → ``W``: ``[n, n]``. Holds about six ``[n, n]`` matrices.
    """
    _check_deql(p, a, b, l2, zero_diag)
    H0, E1, E2, V = deql_system(G, p, a, b, l2)
    M = spd_inverse(H0, what="DEQL H0")
    S1 = M @ V
    if zero_diag:  # w_i = 0 removes every entry the two updates touch: W = S1 − H0⁻¹ diagMat(S1_ii / H0⁻¹_ii)
        return S1 - M * (torch.diagonal(S1) / torch.diagonal(M))[None, :]
    S2 = M @ E1
    del V
    denom1 = 1.0 + torch.diagonal(S2)
    S = S1 - S2 * (torch.diagonal(S1) / denom1)[None, :]
    del S1
    T = M - S2 * (torch.diagonal(M) / denom1)[None, :]
    del S2, M
    num = (E2 * S).sum(0)  # E2[i, :] · S[:, i] (E2 is symmetric)
    den = 1.0 + (E2 * T).sum(0)  # 1 + E2[:, i] · T[:, i]
    return S - T * (num / den)[None, :]


# --------------------------------------------------------------------------------------------------
# Structured form W = diagMat(γ) + P diagMat(δ) and the shared factorisation
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinearForm:
    """``W = diagMat(gamma) + P_mu · diagMat(delta)`` where ``P_mu = (G + D + mu·I)⁻¹``.

    Attributes:
        gamma: ``[n]``.
        delta: ``[n]``.
        mu: The shift of ``G + D`` (``λ`` for EDLAE/EASE, ``λ/c`` for DEQL).
    """

    gamma: torch.Tensor
    delta: torch.Tensor
    mu: float


def deql_form_from_inverse_diag(
    Pdiag: torch.Tensor, g: torch.Tensor, p: float, a: float, b: float, l2: float, zero_diag: bool
) -> LinearForm:
    """The DEQL :class:`LinearForm` given ``Pdiag = diag P_mu`` (``[n]``) and ``g = diag G`` (``[n]``).

    ``P_mu = (G + D + (λ/c)I)⁻¹`` with ``c = (1−p)²(pa² + (1−p)b²)``, so ``H0⁻¹ = P_mu / c``. ``O(n)``.
    """
    _check_deql(p, a, b, l2, zero_diag)
    co = deql_coefficients(p, a, b)
    c = co.h_off
    d = p / (1.0 - p) * g
    m = Pdiag / c  # diag H0⁻¹
    phi = (co.v_diag - co.v_off) * g
    psi = (co.e_diag - co.e_off) * g
    # S1 = diag(α1) + M diag(β1), S2 = diag(α2) + M diag(β2)   (M = H0⁻¹, MG = (I − λM)/c − MD)
    alpha1, beta1 = co.v_off / c, phi - co.v_off * d - co.v_off * l2 / c
    alpha2, beta2 = co.e_off / c, psi - co.e_off * d - co.e_off * l2 / c
    s1d, s2d = alpha1 + m * beta1, alpha2 + m * beta2
    rho, tau = s1d / (1.0 + s2d), m / (1.0 + s2d)
    sig0, sig1 = alpha1 - alpha2 * rho, beta1 - beta2 * rho  # S = diag(σ0) + M diag(σ1)
    th0, th1 = -alpha2 * tau, 1.0 - beta2 * tau  # T = diag(θ0) + M diag(θ1)
    u = (1.0 - l2 * m) / c - m * d - g * m  # Σ_{j≠i} G_ij M_ji
    omega = co.e_off * sig1 * u / (1.0 + co.e_off * th1 * u)
    gamma, delta = sig0 - th0 * omega, sig1 - th1 * omega
    if zero_diag:  # W = S1 − M diagMat(S1_ii / m_i) (see deql_weights_rank1)
        gamma = torch.full_like(m, alpha1)
        delta = -alpha1 / m
    return LinearForm(gamma=gamma, delta=delta / c, mu=l2 / c)


def deql_structured_form(
    G: torch.Tensor, p: float, a: float, b: float, l2: float = 0.0, *, zero_diag: bool = False
) -> tuple[LinearForm, torch.Tensor]:
    """DEQL by the symbolic rank-1 updates with one Cholesky inverse; returns ``(form, P_mu)``."""
    _check_gram(G)
    _check_deql(p, a, b, l2, zero_diag)
    co = deql_coefficients(p, a, b)
    g = torch.diagonal(G)
    K = G + torch.diag(p / (1.0 - p) * g + l2 / co.h_off)
    P = spd_inverse(K, what="DEQL H0")
    return deql_form_from_inverse_diag(torch.diagonal(P), g, p, a, b, l2, zero_diag), P


def deql_weights_structured(
    G: torch.Tensor, p: float, a: float, b: float, l2: float = 0.0, *, zero_diag: bool = False
) -> torch.Tensor:
    """DEQL ``W`` (``[n, n]``) from :func:`deql_structured_form`: one inverse, no extra ``n³`` products."""
    form, P = deql_structured_form(G, p, a, b, l2, zero_diag=zero_diag)
    W = P.mul_(form.delta[None, :])
    W.diagonal().add_(form.gamma)
    return W


def _eigh(K: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``K = Q diag(e) Qᵀ`` for symmetric ``K``: ``(e [n] ascending, Q [n, n])``.

    On the CPU through SciPy's LAPACK divide-and-conquer driver (``?syevd``): at n = 2,000, one thread,
    1.6 s against 2.3 s for ``torch.linalg.eigh`` on the same machine; on CUDA ``torch.linalg.eigh``.
    """
    if K.device.type != "cpu":
        return torch.linalg.eigh(K)
    import scipy.linalg

    e, Q = scipy.linalg.eigh(K.numpy(), driver="evd", check_finite=False)
    return torch.from_numpy(e).to(K.dtype), torch.from_numpy(Q).to(K.dtype)


class GramFactorization:
    """``G + D = Q diag(e) Qᵀ`` for one dropout ``p`` (``D = p/(1−p)·diagMat(g)``), shared by a sweep.

    Every EASE (``p = 0``), EDLAE and DEQL model with this ``p`` is ``W = diagMat(γ) + P_mu diagMat(δ)``
    with ``P_mu = Q diag(1/(e + mu)) Qᵀ``, so a sweep over ``(a, b, λ)`` costs one ``eigh`` plus,
    per setting, ``O(n²)`` for ``(γ, δ)`` and ``O(m n²)`` to score ``m`` users (:meth:`scores`), or one
    ``n³`` product for a dense ``W`` (:meth:`weights`).

    Args:
        G: ``[n, n]`` Gram matrix ``RᵀR``.
        p: Dropout probability in ``[0, 1)``.
    """

    def __init__(self, G: torch.Tensor, p: float) -> None:
        _check_gram(G)
        _check_p(p)
        self.p = p
        self.g = torch.diagonal(G).clone()
        K = G + torch.diag(p / (1.0 - p) * self.g)
        self.evals, self.evecs = _eigh(K)
        self._q2 = self.evecs * self.evecs  # [n, n], for diag(P_mu) = Q² (1/(e + mu))

    @property
    def n_items(self) -> int:
        """``n``."""
        return int(self.g.shape[0])

    def _spectrum(self, mu: float) -> torch.Tensor:
        shifted = self.evals + mu
        if float(shifted.min()) <= 0.0:
            raise NotPositiveDefiniteError(
                f"G + D + {mu:g}·I is not positive definite (smallest eigenvalue {float(shifted.min()):.3g}); "
                "use l2 > 0 or drop items without interactions"
            )
        return 1.0 / shifted

    def inverse_diag(self, mu: float) -> torch.Tensor:
        """``diag P_mu``: ``[n]``, ``O(n²)``."""
        return self._q2 @ self._spectrum(mu)

    def inverse(self, mu: float) -> torch.Tensor:
        """``P_mu = (G + D + mu·I)⁻¹``: ``[n, n]``."""
        return (self.evecs * self._spectrum(mu)[None, :]) @ self.evecs.T

    def edlae_form(self, l2: float) -> LinearForm:
        """EDLAE with this ``p`` (EASE when ``p = 0``): ``γ = 1``, ``δ = −1 ⊘ diag P_λ``."""
        pd = self.inverse_diag(l2)
        return LinearForm(gamma=torch.ones_like(pd), delta=-1.0 / pd, mu=l2)

    def deql_form(self, a: float, b: float, l2: float = 0.0, *, zero_diag: bool = False) -> LinearForm:
        """DEQL with this ``p`` and ``(a, b, λ)``."""
        _check_deql(self.p, a, b, l2, zero_diag)
        c = deql_coefficients(self.p, a, b).h_off
        return deql_form_from_inverse_diag(self.inverse_diag(l2 / c), self.g, self.p, a, b, l2, zero_diag)

    def weights(self, form: LinearForm) -> torch.Tensor:
        """Dense ``W = diagMat(γ) + P_mu diagMat(δ)``: ``[n, n]``."""
        W = self.inverse(form.mu).mul_(form.delta[None, :])
        W.diagonal().add_(form.gamma)
        return W

    def project(self, X: torch.Tensor) -> torch.Tensor:
        """``X Q`` for a block of users ``X``: ``[m, n]`` → ``[m, n]`` (reused by :meth:`scores`)."""
        return X @ self.evecs

    def scores(self, X: torch.Tensor, XQ: torch.Tensor, form: LinearForm) -> torch.Tensor:
        """``X W`` without forming ``W``: ``X·diagMat(γ) + (XQ diag(1/(e+mu))) Qᵀ diagMat(δ)``; ``[m, n]``."""
        return X * form.gamma[None, :] + ((XQ * self._spectrum(form.mu)[None, :]) @ self.evecs.T) * form.delta[None, :]
