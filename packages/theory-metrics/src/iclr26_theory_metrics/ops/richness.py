r"""The low-rank dynamical-richness metric :math:`D_{LR}` (Nam, Fonseca, Lee, Mingard, Göring, El Harzli, Erturk,
Hayou, Louis: "Decoupling Dynamical Richness from Representation Learning: Towards Practical Measurement",
ICLR 2026, arXiv 2410.04264: the definition of :math:`D_{LR}` through the minimum-projection operator, and its
empirical approximation from finite samples, Appendix E).

With penultimate features :math:`\Phi \in \mathbb R^{n\times p}` and network outputs
:math:`\hat F \in \mathbb R^{n\times C}` on the same n inputs, the feature kernel is :math:`T = \Phi\Phi^\top` and
the minimum-projection operator :math:`T_{MP} = a_1 \mathbf 1\mathbf 1^\top + a_2 P_{\hat H}` projects onto the
constant and the span of the learned functions. :math:`D_{LR} = 1 - \mathrm{CKA}(T, T_{MP}) \in [0, 1]`;
0 = richest (the features span only the learned functions plus a constant). Centring both sides removes the
constant term, so with :math:`\Phi_c = H\Phi`, :math:`F_c = H\hat F` (:math:`H = I - \frac1n 11^\top`) and Q an
orthonormal basis of :math:`\operatorname{col}(F_c)` of rank r:

.. math:: \mathrm{CKA} = \frac{\lVert \Phi_c^\top Q\rVert_F^2}{\lVert \Phi_c^\top \Phi_c\rVert_F\,\sqrt r}.

Everything is expressed through the centred second moments :math:`S_{\Phi\Phi} = \Phi_c^\top\Phi_c` ``[p, p]``,
:math:`S_{\Phi F} = \Phi_c^\top F_c` ``[p, C]`` and :math:`S_{FF} = F_c^\top F_c` ``[C, C]``:
:math:`\lVert\Phi_c^\top Q\rVert_F^2 = \operatorname{tr}(S_{\Phi F} S_{FF}^{+} S_{\Phi F}^\top)`, r = rank of
:math:`S_{FF}`, so :class:`RichnessAccumulator` streams over batches in O(p² + pC + C²) memory (shifted by the
first batch's means, so large offsets do not cancel) and never forms an n × n kernel. :func:`naive_richness` is
the literal n × n twin used by the tests. All in float64.

Two readings of :math:`\hat H` (``centre_outputs``). The definition takes :math:`P_{\hat H}` onto the span of the
*uncentred* outputs :math:`\hat F`; centring the kernel then gives :math:`H T_{MP} H = a_2 H P_{\hat H} H`, which is
not a projection when the constant is not in :math:`\operatorname{col}(\hat F)` (biased logits). The research
notes' inferred finite-sample estimator (the paper's Appendix E could not be read) instead projects onto the span
of the *centred* outputs :math:`F_c` (the formula above). ``centre_outputs=True`` (default, the notes' estimator)
is that one; ``False`` is the literal definition, from the same moments: with :math:`G = \hat F^\top\hat F`
(uncentred, rank r), :math:`a = n\,\mu_F^\top G^{+}\mu_F = \tfrac1n 1^\top P_{\hat H} 1 \in [0, 1]`,

.. math:: \mathrm{CKA} = \frac{\operatorname{tr}(S_{\Phi F} G^{+} S_{\Phi F}^\top)}
          {\lVert S_{\Phi\Phi}\rVert_F \sqrt{r - 1 + (1 - a)^2}}

(:math:`\lVert H P_{\hat H} H\rVert_F^2 = r - 2a + a^2`). The two agree whenever the constant lies in the span
of the outputs (a = 1, e.g. a least-squares read-out with an intercept of one-hot targets).

D_LR = 0 does not imply neural collapse: any features that are a linear map of the outputs give 0, also for
continuous outputs with no classes at all (a regression network whose penultimate layer is its output's span).

Properties (tested): :math:`D_{LR} \in [0, 1]`; exactly 0 when the centred features are isotropic on the span of
the centred outputs (plus any constant); exactly 1 when the centred features are orthogonal to that span;
invariant to an isotropic scaling or rotation of the features, to adding a constant to them, and to any
invertible linear map of the outputs. Degenerate data (features or outputs without variance) give NaN.

The paper's eigen-decomposition view (:func:`richness_spectrum`): the eigenvalues ρ_k of the centred feature
kernel relative to ρ_1, and the cumulative fraction of the centred outputs (utilisation Π̂(k)) and of the
targets (quality Π*(k)) captured by its top-k eigenfunctions, evaluated on the sample (the Nyström extension
:math:`e_k = \Phi_c v_k / s_k` of the eigenvectors of :math:`S_{\Phi\Phi}`, so it needs no n × n matrix).
The baselines the paper compares with: the initial-kernel distance :func:`kernel_distance` and the squared
parameter norm :func:`parameter_norm` (and NC1, :mod:`iclr26_theory_metrics.ops.neural_collapse`).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from iclr26_shared.errors import Iclr26Error
from iclr26_theory_metrics.ops.metric import StreamingMetric, TensorLike, as_tensor

__all__ = [
    "RichnessAccumulator",
    "RichnessInputError",
    "kernel_distance",
    "naive_richness",
    "parameter_norm",
    "richness",
    "richness_spectrum",
]

_DTYPE = torch.float64


class RichnessInputError(Iclr26Error, ValueError):
    """Features or outputs that :math:`D_{LR}` cannot use; the message names the argument."""


def _check(
    name: str, x: object, *, rows: int | None = None, cols: int | None = None, vector_ok: bool = False
) -> torch.Tensor:
    x = as_tensor(x)
    if not isinstance(x, torch.Tensor):
        raise RichnessInputError(f"{name} must be a torch.Tensor or a NumPy array, got {type(x).__name__}")
    if vector_ok and x.ndim == 1:
        x = x.unsqueeze(1)  # one output channel (a scalar output, e.g. a regression head)
    if x.ndim != 2:
        want = "2-D [n, dim] or 1-D [n] (one channel)" if vector_ok else "2-D [n, dim]"
        raise RichnessInputError(f"{name} must be {want}, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise RichnessInputError(f"{name} must be floating point, got {x.dtype}")
    if x.shape[1] == 0:
        raise RichnessInputError(f"{name} has no columns (shape {tuple(x.shape)}); need at least one")
    if rows is not None and x.shape[0] != rows:
        raise RichnessInputError(f"{name} has {x.shape[0]} rows but features have {rows}; they must be the same inputs")
    if cols is not None and x.shape[1] != cols:
        raise RichnessInputError(f"{name} has {x.shape[1]} columns, earlier batches had {cols}")
    if not bool(torch.isfinite(x).all()):
        raise RichnessInputError(f"{name} contains NaN or infinite values")
    return x.to(_DTYPE)


def _cka_from_moments(
    s_pp: torch.Tensor,
    s_pf: torch.Tensor,
    s_ff: torch.Tensor,
    rcond: float,
    *,
    mean_f: torch.Tensor | None = None,
    n: int = 0,
) -> float:
    """:math:`1 - \\mathrm{tr}(S_{\\Phi F} S_{FF}^+ S_{\\Phi F}^\\top) / (\\lVert S_{\\Phi\\Phi}\\rVert_F \\sqrt r)`
    (centred outputs); with ``mean_f`` [C] and ``n`` given, the uncentred reading (module docstring): G = S_FF +
    n μμᵀ in place of S_FF and √(r − 1 + (1 − a)²) in place of √r."""
    norm_pp = float(torch.linalg.matrix_norm(s_pp))
    if float(torch.linalg.matrix_norm(s_ff)) == 0.0 or norm_pp == 0.0:
        return math.nan  # outputs or features without variance
    g = s_ff if mean_f is None else s_ff + n * torch.outer(mean_f, mean_f)
    evals, evecs = torch.linalg.eigh(0.5 * (g + g.T))
    top = float(evals.max()) if evals.numel() else 0.0
    if top <= 0.0:
        return math.nan
    keep = evals > rcond * top
    r = int(keep.sum())
    v = evecs[:, keep] / evals[keep].sqrt()  # G^{+1/2} on its range, [C, r]
    captured = float((s_pf @ v).square().sum())  # tr(S_ΦF G^+ S_ΦF^T)
    if mean_f is None:
        norm_mp = math.sqrt(r)
    else:
        a = min(max(n * float((mean_f @ v).square().sum()), 0.0), 1.0)  # (1/n) 1ᵀ P 1
        norm_mp = math.sqrt(max(r - 1 + (1.0 - a) ** 2, 0.0))
        if norm_mp == 0.0:
            return math.nan  # the outputs span only the constant
    cka = captured / (norm_pp * norm_mp)
    return 1.0 - min(max(cka, 0.0), 1.0)


class RichnessAccumulator(StreamingMetric):
    """Streams :math:`D_{LR}` over batches of ``(features [B, p], outputs [B, C] or [B])``; a metric object.

    :meth:`compute` (or :meth:`value`) is :math:`D_{LR}` of every batch seen, over all processes when
    ``torch.distributed`` is initialised: the processes' counts and sums are all-reduced into the global means,
    then each process's second moments re-centred on them are summed (exact, whatever share each process saw).
    :meth:`reset` starts again. ``higher_is_better`` is None: :math:`D_{LR}` measures how rich the dynamics
    were (0 = richest), it does not score a model.

    Usage::

        acc = RichnessAccumulator()
        for x in loader:
            acc.update(model.features(x), model(x))
        d_lr = acc.compute()
    """

    def __init__(
        self,
        *,
        rcond: float = 1e-10,
        centre_outputs: bool = True,
        process_group: Any = None,
        dist_sync_on_compute: bool = True,
    ) -> None:
        if not (isinstance(rcond, float | int) and 0.0 <= rcond < 1.0):
            raise RichnessInputError(f"rcond must be a number in [0, 1), got {rcond!r}")
        super().__init__(process_group=process_group, dist_sync_on_compute=dist_sync_on_compute)
        self.rcond = float(rcond)
        self.centre_outputs = bool(centre_outputs)
        self.reset()

    def reset(self) -> None:
        """Forget every batch seen."""
        self.n = 0
        self._shift: tuple[torch.Tensor, torch.Tensor] | None = None
        self._sums: list[torch.Tensor] = []  # Σφ, Σf, Σφφᵀ, Σφfᵀ, Σffᵀ of the shifted rows

    @torch.no_grad()
    def update(self, features: TensorLike, outputs: TensorLike) -> None:
        """Add a batch: ``features [B, p]`` and ``outputs [B, C]`` (or ``[B]``, one channel) of the same B inputs
        (any float dtype, torch or NumPy)."""
        dims = None if self._shift is None else (self._shift[0].shape[0], self._shift[1].shape[0])
        phi = _check("features", features, cols=None if dims is None else dims[0])
        f = _check("outputs", outputs, rows=phi.shape[0], cols=None if dims is None else dims[1], vector_ok=True).to(
            phi.device
        )
        if phi.shape[0] == 0:
            return
        if self._shift is None:
            self._shift = (phi.mean(0), f.mean(0))
            p, c = phi.shape[1], f.shape[1]
            shapes = ((p,), (c,), (p, p), (p, c), (c, c))
            self._sums = [torch.zeros(*shape, dtype=_DTYPE, device=phi.device) for shape in shapes]
        a, b = phi - self._shift[0].to(phi.device), f - self._shift[1].to(phi.device)
        for acc, term in zip(self._sums, (a.sum(0), b.sum(0), a.T @ a, a.T @ b, b.T @ b), strict=True):
            acc += term.to(acc.device)
        self.n += int(phi.shape[0])

    def _moments(self, *, synced: bool) -> tuple[int, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(n, mean of the outputs [C], S_ΦΦ, S_ΦF, S_FF)`` centred on the (global, when ``synced``) means."""
        if self._shift is None:
            if not synced:
                raise RichnessInputError(f"D_LR needs at least n = 2 inputs, got n = {self.n}")
            raise RichnessInputError(
                "this process saw no batch: under torch.distributed every process needs at least one update "
                "(the feature and output widths come from it)"
            )
        s_a, s_b, s_aa, s_ab, s_bb = self._sums
        c_a, c_b = self._shift
        n_local = float(self.n)
        if not synced:
            mu_a, mu_b = s_a / n_local, s_b / n_local
            return (
                self.n,
                mu_b + c_b,
                s_aa - n_local * torch.outer(mu_a, mu_a),
                s_ab - n_local * torch.outer(mu_a, mu_b),
                s_bb - n_local * torch.outer(mu_b, mu_b),
            )
        n = int(self._all_reduce(torch.tensor([self.n], dtype=torch.int64, device=s_a.device))[0])
        mean_a = self._all_reduce(s_a + n_local * c_a) / n  # global means
        mean_b = self._all_reduce(s_b + n_local * c_b) / n
        da, db = c_a - mean_a, c_b - mean_b  # rows about the global mean: shifted row + d

        def centred(s_xy: torch.Tensor, s_x: torch.Tensor, s_y: torch.Tensor, dx: torch.Tensor, dy: torch.Tensor):
            return s_xy + torch.outer(s_x, dy) + torch.outer(dx, s_y) + n_local * torch.outer(dx, dy)

        return (
            n,
            mean_b,
            self._all_reduce(centred(s_aa, s_a, s_a, da, da)),
            self._all_reduce(centred(s_ab, s_a, s_b, da, db)),
            self._all_reduce(centred(s_bb, s_b, s_b, db, db)),
        )

    def _compute(self, *, synced: bool) -> float:
        n, mean_f, s_pp, s_pf, s_ff = self._moments(synced=synced)
        if n < 2:
            raise RichnessInputError(f"D_LR needs at least n = 2 inputs, got n = {n}")
        if self.centre_outputs:
            return _cka_from_moments(s_pp, s_pf, s_ff, self.rcond)
        return _cka_from_moments(s_pp, s_pf, s_ff, self.rcond, mean_f=mean_f, n=n)

    def compute(self) -> float:
        """:math:`D_{LR}` of every batch seen (all processes under ``torch.distributed``); raises
        :class:`RichnessInputError` for fewer than 2 rows, NaN when the features or the outputs have no
        variance."""
        return super().compute()

    def value(self) -> float:
        """:math:`D_{LR}` of this process's batches (:meth:`compute_local`)."""
        return self._compute(synced=False)


def richness(
    features: TensorLike,
    outputs: TensorLike,
    *,
    rcond: float = 1e-10,
    chunk_size: int | None = None,
    centre_outputs: bool = True,
) -> float:
    """:math:`D_{LR} = 1 - \\mathrm{CKA}(T, T_{MP})` of ``features [n, p]`` and ``outputs [n, C]`` (or ``[n]``: one
    output channel; torch tensors or NumPy arrays) (module
    docstring), accumulated in chunks of ``chunk_size`` rows (all at once by default); ``centre_outputs`` picks
    the reading of Ĥ (span of the centred outputs, default, or of the outputs as they are). Returns a float in
    [0, 1] (NaN when the features or the outputs have no variance). Raises :class:`RichnessInputError` for
    n < 2, C = 0 or p = 0, mismatched rows, NaN/inf or non-tensor input."""
    phi = _check("features", features)
    f = _check("outputs", outputs, rows=phi.shape[0], vector_ok=True)
    if phi.shape[0] < 2:
        raise RichnessInputError(f"D_LR needs at least n = 2 inputs, got n = {phi.shape[0]}")
    step = phi.shape[0] if chunk_size is None else chunk_size
    if not (isinstance(step, int) and step >= 1):
        raise RichnessInputError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    acc = RichnessAccumulator(rcond=rcond, centre_outputs=centre_outputs)
    for start in range(0, phi.shape[0], step):
        acc.update(phi[start : start + step], f[start : start + step])
    return acc.value()


def naive_richness(
    features: TensorLike, outputs: TensorLike, *, rcond: float = 1e-10, centre_outputs: bool = True
) -> float:
    """The literal twin of :func:`richness`: the centred n × n kernels :math:`K_1 = \\Phi_c\\Phi_c^\\top` and
    :math:`K_2 = QQ^\\top` (Q from the SVD of :math:`F_c`; with ``centre_outputs=False`` :math:`K_2 = HQQ^\\top H`
    with Q from the SVD of F) and CKA = ⟨K_1, K_2⟩_F / (‖K_1‖_F ‖K_2‖_F). O(n²) memory; for tests and the benchmark
    baseline."""
    phi = _check("features", features)
    f = _check("outputs", outputs, rows=phi.shape[0], vector_ok=True)
    n = phi.shape[0]
    if n < 2:
        raise RichnessInputError(f"D_LR needs at least n = 2 inputs, got n = {n}")
    h = torch.eye(n, dtype=_DTYPE, device=phi.device) - 1.0 / n
    phi_c, f_c = h @ phi, h @ f.to(phi.device)
    if float(f_c.abs().max()) == 0.0:
        return math.nan
    u, s, _ = torch.linalg.svd(f_c if centre_outputs else f.to(phi.device), full_matrices=False)
    q = u[:, s * s > rcond * s[0] * s[0]]
    k1, k2 = phi_c @ phi_c.T, q @ q.T
    if not centre_outputs:
        k2 = h @ k2 @ h
    n1 = float(torch.linalg.matrix_norm(k1))
    if n1 == 0.0:
        return math.nan
    return 1.0 - float((k1 * k2).sum()) / (n1 * float(torch.linalg.matrix_norm(k2)))


def _centred_moments(*blocks: torch.Tensor) -> list[list[torch.Tensor]]:
    """All pairwise centred cross-moments ``X_iᵀ H X_j`` of row-aligned float64 blocks (computed once, small)."""
    centred = [b - b.mean(0) for b in blocks]
    return [[a.T @ b for b in centred] for a in centred]


def richness_spectrum(
    features: TensorLike,
    outputs: TensorLike,
    targets: TensorLike | None = None,
    *,
    rcond: float = 1e-12,
) -> dict[str, list[float]]:
    """The eigen-decomposition view of D_LR on ``features [n, p]``, ``outputs [n, C]`` and optional ``targets
    [n, C']`` (e.g. one-hot labels): ``relative_eigenvalues`` ρ_k/ρ_1 of the centred feature kernel (descending,
    the first is 1), ``utilisation`` Π̂(k) and ``quality`` Π*(k) (when targets are given): the cumulative share of
    the centred outputs' / targets' squared norm in the span of the top-k eigenfunctions, k = 1..r (r = the rank
    kept with relative tolerance ``rcond`` on ρ). Raises :class:`RichnessInputError` for bad input (as
    :func:`richness`); returns empty lists when the features have no variance."""
    phi = _check("features", features)
    f = _check("outputs", outputs, rows=phi.shape[0], vector_ok=True).to(phi.device)
    if phi.shape[0] < 2:
        raise RichnessInputError(f"the spectrum needs at least n = 2 inputs, got n = {phi.shape[0]}")
    blocks = [phi, f]
    if targets is not None:
        blocks.append(_check("targets", targets, rows=phi.shape[0], vector_ok=True).to(phi.device))
    m = _centred_moments(*blocks)
    evals, evecs = torch.linalg.eigh(0.5 * (m[0][0] + m[0][0].T))
    evals, evecs = evals.flip(0), evecs.flip(1)
    out: dict[str, list[float]] = {"relative_eigenvalues": [], "utilisation": []}
    if targets is not None:
        out["quality"] = []
    if evals.numel() == 0 or float(evals[0]) <= 0.0:
        return out
    keep = evals > rcond * evals[0]
    evals, evecs = evals[keep], evecs[:, keep]
    out["relative_eigenvalues"] = (evals / evals[0]).tolist()
    for key, j in (("utilisation", 1), ("quality", 2)):
        if j >= len(blocks):
            continue
        total = float(torch.diagonal(m[j][j]).sum())
        if total <= 0.0:
            out[key] = [math.nan] * int(evals.numel())
            continue
        # ‖e_kᵀ Y_c‖² with e_k = Φ_c v_k / s_k:  (v_kᵀ S_ΦY)² / ρ_k, summed over the columns of Y
        captured = (evecs.T @ m[0][j]).square().sum(1) / evals
        out[key] = (captured.cumsum(0) / total).clamp(max=1.0).tolist()
    return out


def kernel_distance(features_a: TensorLike, features_b: TensorLike) -> float:
    """The initial-kernel distance baseline S = 1 − ⟨K_a, K_b⟩_F / (‖K_a‖_F ‖K_b‖_F) between the (uncentred) feature
    kernels K = ΦΦᵀ of the same n inputs, e.g. at initialisation and now; via the p × p Gram blocks, so no n × n
    kernel is formed (the paper's O(n²p) baseline). NaN when a kernel is zero."""
    a = _check("features_a", features_a)
    b = _check("features_b", features_b, rows=a.shape[0]).to(a.device)
    cross = float((a.T @ b).square().sum())
    norm_a, norm_b = float(torch.linalg.matrix_norm(a.T @ a)), float(torch.linalg.matrix_norm(b.T @ b))
    if norm_a == 0.0 or norm_b == 0.0:
        return math.nan
    return 1.0 - cross / (norm_a * norm_b)


def parameter_norm(model: torch.nn.Module) -> float:
    """The parameter-norm baseline ‖θ‖² (sum of squares of every parameter, float64)."""
    return float(sum(float(p.detach().to(_DTYPE).square().sum()) for p in model.parameters()))
