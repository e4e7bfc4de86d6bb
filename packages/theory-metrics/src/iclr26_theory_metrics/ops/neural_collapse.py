r"""Neural-collapse metrics NC0–NC4 (Zhao, Cheng, Masarczyk, Lucchi, ICLR 2026, Appendix B).

Notation (shapes in brackets): features :math:`h_i \in \mathbb R^p` with labels :math:`y_i \in [0, K)`;
class means :math:`\mu_k` ``[K, p]``; global mean :math:`\mu_G = \frac1K \sum_k \mu_k` (the mean of the class
means, so it is independent of class imbalance); centred means :math:`\bar\mu_k = \mu_k - \mu_G`, collected as
the columns of :math:`M \in \mathbb R^{p\times K}` (``centred_means = M.T``, ``[K, p]``); last-layer weights
:math:`W \in \mathbb R^{K\times p}` with rows :math:`w_k` and optional bias :math:`b \in \mathbb R^K`;
:math:`M^\star = \frac{1}{\sqrt{K-1}}(I_K - \frac1K J_K)` (the normalised simplex-ETF Gram matrix).

* :math:`\Sigma_B = \frac1K \sum_k \bar\mu_k \bar\mu_k^\top`,
  :math:`\Sigma_W = \frac1N \sum_i (h_i - \mu_{y_i})(h_i - \mu_{y_i})^\top` (pooled; ``= 1/(KN)`` for balanced
  classes of N samples as in the paper).
* **NC0** :math:`= \frac1p \lVert W^\top 1_K \rVert_2` (Eq. 12). Whether the norm is squared is ambiguous in the
  paper: ``nc0_squared=True`` uses :math:`\frac1p\lVert W^\top 1\rVert_2^2`. Both are always returned
  (``nc0_norm``, ``nc0_squared``), plus the theorems' :math:`\alpha = \frac1K\lVert W^\top 1\rVert_2^2`.
* **NC1** :math:`= \frac1K \operatorname{Tr}(\Sigma_W \Sigma_B^\dagger)`.
* **NC2**: norm variation ``nc2_norm`` = std_k ‖μ̄_k‖ / mean_k ‖μ̄_k‖ (Bessel-corrected std, as torch's default),
  angle error ``nc2_angle`` = mean_{k≠k'} |cos(μ̄_k, μ̄_k') + 1/(K−1)|, and the single metric (Kothapalli)
  ``nc2`` :math:`= s_2\,\lVert M^\top M / \lVert M^\top M\rVert_F - M^\star\rVert_F`.
* **NC2W** (``nc2w``, ``nc2w_norm``, ``nc2w_angle``): the same on the rows of W (not centred), i.e. on
  :math:`WW^\top`. **NC2M** ``nc2m`` :math:`= s_2\,\lVert WM/\lVert WM\rVert_F - M^\star\rVert_F`.
* **NC3** (``nc3_form="alignment"``, the paper's Appendix B as written) ``nc3_alignment``
  :math:`= s_3\,\lVert W/\lVert W\rVert_F - M^\top/\lVert M\rVert_F\rVert_F`; ``nc3_form="self-duality"``
  makes ``nc3`` the self-duality error ``nc3_duality`` (equal to ``nc2m``:
  :math:`s_2\,\lVert WM/\lVert WM\rVert_F - M^\star\rVert_F`, the ``self_duality_error`` of the
  ``rhubarbwu/neural-collapse`` library that the paper's experiments use). Both are always returned.
* **NC4** ``nc4_agreement`` :math:`= \frac1{N'}\sum_i 1[\arg\max_k (\langle w_k, h_i\rangle + b_k) =
  \arg\min_k \lVert h_i - \mu_k\rVert]` over evaluation features (the paper uses the test set; default: the
  same features). ``nc4_form="mismatch"`` makes ``nc4`` = 1 − agreement (Papyan et al.'s form, → 0).

Scale convention (``scale``): ``"paper"`` uses :math:`s_2 = 1/K^2` and :math:`s_3 = 1/(Kp)` as written in the
paper's Appendix B; ``"none"`` uses :math:`s_2 = s_3 = 1` (the ``rhubarbwu/neural-collapse`` library the paper
used, whose magnitudes match the paper's Table 2). The pseudo-inverse keeps the at most K−1 eigen-directions of
:math:`\Sigma_B` with eigenvalue above ``rcond`` × the largest one.

Every quantity is computed in float64 on the device of the inputs (CPU or CUDA). :class:`NCAccumulator`
streams over batches (memory ``O(Kp + p^2)``) with per-class shifts so that the within-class scatter does not
suffer from cancellation; :func:`naive_neural_collapse_metrics` is the literal twin used to test it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

from iclr26_shared.errors import Iclr26Error

__all__ = [
    "METRIC_KEYS",
    "ClassStats",
    "NCAccumulator",
    "NC4Counter",
    "NCInputError",
    "naive_neural_collapse_metrics",
    "nc_metrics_from_stats",
    "neural_collapse_metrics",
]

Scale = Literal["paper", "none"]
NC4Form = Literal["agreement", "mismatch"]
NC3Form = Literal["alignment", "self-duality"]

#: Keys of the dict every metric function returns (each value a float).
METRIC_KEYS: tuple[str, ...] = (
    "nc0",
    "nc0_norm",
    "nc0_squared",
    "alpha",
    "nc1",
    "nc2",
    "nc2_norm",
    "nc2_angle",
    "nc2w",
    "nc2w_norm",
    "nc2w_angle",
    "nc2m",
    "nc3",
    "nc3_alignment",
    "nc3_duality",
    "nc4",
    "nc4_agreement",
    "nc4_mismatch",
)

_DTYPE = torch.float64


class NCInputError(Iclr26Error, ValueError):
    """Features, labels or weights that the metrics cannot use; the message names the argument."""


# --------------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------------


def _check_matrix(name: str, x: object, *, dim: int | None = None) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise NCInputError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim != 2:
        raise NCInputError(f"{name} must be 2-D, got shape {tuple(x.shape)}")
    if not (x.is_floating_point()):
        raise NCInputError(f"{name} must be floating point, got {x.dtype}")
    if dim is not None and x.shape[1] != dim:
        raise NCInputError(f"{name} has {x.shape[1]} columns but the features have dimension p = {dim}")
    if not bool(torch.isfinite(x).all()):
        raise NCInputError(f"{name} contains NaN or infinite values")
    return x.to(_DTYPE)


def _check_labels(labels: object, n: int, num_classes: int) -> torch.Tensor:
    if not isinstance(labels, torch.Tensor):
        raise NCInputError(f"labels must be a torch.Tensor, got {type(labels).__name__}")
    if labels.ndim != 1 or labels.shape[0] != n:
        raise NCInputError(f"labels must have shape [N] = [{n}] to match the features, got {tuple(labels.shape)}")
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise NCInputError(f"labels must be an integer tensor, got {labels.dtype}")
    if n and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
        raise NCInputError(
            f"labels must lie in [0, {num_classes}) (K = {num_classes} classes), "
            f"got range [{int(labels.min())}, {int(labels.max())}]"
        )
    return labels.long()


# --------------------------------------------------------------------------------------------------
# class statistics and streaming accumulation
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassStats:
    """First and second moments per class.

    Attributes:
        means: Class means :math:`\\mu_k`, ``[K, p]`` float64.
        counts: Samples per class, ``[K]`` int64 (all > 0).
        within_cov: Pooled within-class covariance :math:`\\Sigma_W`, ``[p, p]`` float64.
    """

    means: torch.Tensor
    counts: torch.Tensor
    within_cov: torch.Tensor

    @property
    def num_classes(self) -> int:
        """K."""
        return int(self.means.shape[0])

    @property
    def dim(self) -> int:
        """p."""
        return int(self.means.shape[1])

    @property
    def global_mean(self) -> torch.Tensor:
        """:math:`\\mu_G = \\frac1K\\sum_k \\mu_k`, ``[p]``."""
        return self.means.mean(dim=0)

    @property
    def centred_means(self) -> torch.Tensor:
        """:math:`M^\\top` with rows :math:`\\bar\\mu_k = \\mu_k - \\mu_G`, ``[K, p]``."""
        return self.means - self.global_mean


class NCAccumulator:
    """Streaming class means and pooled within-class covariance (one pass, float64).

    For each class k the first batch that contains it fixes a shift :math:`c_k` (that batch's class mean). The
    accumulator keeps :math:`n_k`, :math:`s_k = \\sum_{i\\in k}(h_i - c_k)` and the pooled scatter
    :math:`S = \\sum_i (h_i - c_{y_i})(h_i - c_{y_i})^\\top`; then :math:`\\mu_k = c_k + s_k/n_k` and
    :math:`N\\Sigma_W = S - \\sum_k n_k (\\mu_k - c_k)(\\mu_k - c_k)^\\top`. The shifts keep the subtraction
    well conditioned even when the features have collapsed (tiny :math:`\\Sigma_W`, large means).

    Usage::

        acc = NCAccumulator(num_classes=10, dim=512)
        for x, y in loader:
            acc.update(model.features(x), y)
        stats = acc.finalize()
    """

    def __init__(self, num_classes: int, dim: int, *, device: torch.device | str | None = None) -> None:
        if not isinstance(num_classes, int) or num_classes < 2:
            raise NCInputError(f"num_classes must be an integer >= 2 (neural collapse needs K >= 2), got {num_classes}")
        if not isinstance(dim, int) or dim < 1:
            raise NCInputError(f"dim must be a positive integer, got {dim}")
        self.num_classes = num_classes
        self.dim = dim
        self.device = torch.device(device) if device is not None else None
        self._shift: torch.Tensor | None = None  # [K, p]
        self._seen: torch.Tensor | None = None  # [K] bool
        self._sum: torch.Tensor | None = None  # [K, p]
        self._counts: torch.Tensor | None = None  # [K]
        self._scatter: torch.Tensor | None = None  # [p, p]

    def _init(self, device: torch.device) -> None:
        k, p = self.num_classes, self.dim
        self.device = device
        self._shift = torch.zeros(k, p, dtype=_DTYPE, device=device)
        self._seen = torch.zeros(k, dtype=torch.bool, device=device)
        self._sum = torch.zeros(k, p, dtype=_DTYPE, device=device)
        self._counts = torch.zeros(k, dtype=torch.int64, device=device)
        self._scatter = torch.zeros(p, p, dtype=_DTYPE, device=device)

    @property
    def num_samples(self) -> int:
        """Samples seen so far."""
        return 0 if self._counts is None else int(self._counts.sum())

    @torch.no_grad()
    def update(self, features: torch.Tensor, labels: torch.Tensor) -> None:
        """Add a batch: ``features [B, p]`` (any float dtype), ``labels [B]`` in ``[0, K)``."""
        h = _check_matrix("features", features, dim=self.dim)
        y = _check_labels(labels, h.shape[0], self.num_classes).to(h.device)
        if h.shape[0] == 0:
            return
        if self._shift is None:
            self._init(h.device)
        assert self._shift is not None and self._seen is not None and self._sum is not None
        assert self._counts is not None and self._scatter is not None
        if h.device != self._shift.device:
            raise NCInputError(f"features are on {h.device} but the accumulator holds its sums on {self._shift.device}")
        batch_counts = torch.bincount(y, minlength=self.num_classes)
        new = (batch_counts > 0) & ~self._seen
        if bool(new.any()):
            batch_sum = torch.zeros_like(self._sum).index_add_(0, y, h)
            batch_mean = batch_sum / batch_counts.clamp_min(1).unsqueeze(1).to(_DTYPE)
            self._shift[new] = batch_mean[new]
            self._seen |= new
        d = h - self._shift[y]  # [B, p]
        self._sum.index_add_(0, y, d)
        self._counts += batch_counts
        self._scatter += d.T @ d

    def finalize(self) -> ClassStats:
        """The :class:`ClassStats`; raises :class:`NCInputError` when a class received no samples."""
        if self._counts is None or self.num_samples == 0:
            raise NCInputError("no features were accumulated (empty data set)")
        assert self._shift is not None and self._sum is not None and self._scatter is not None
        empty = torch.nonzero(self._counts == 0).flatten().tolist()
        if empty:
            raise NCInputError(
                f"class(es) {empty} have no samples; every one of the K = {self.num_classes} classes needs at least one"
            )
        n = self._counts.to(_DTYPE).unsqueeze(1)  # [K, 1]
        mean_shift = self._sum / n  # [K, p]
        means = self._shift + mean_shift
        within = self._scatter - (mean_shift * n).T @ mean_shift
        within = 0.5 * (within + within.T) / float(self.num_samples)
        return ClassStats(means=means, counts=self._counts.clone(), within_cov=within)


class NC4Counter:
    """Streaming NC4: counts samples whose linear-classifier prediction equals the nearest class mean.

    ``weights [K, p]``, optional ``bias [K]`` and the class ``means [K, p]`` are fixed; :meth:`update` takes
    ``features [B, p]``; :attr:`agreement` is the rate over all samples seen.
    """

    def __init__(self, weights: torch.Tensor, means: torch.Tensor, bias: torch.Tensor | None = None) -> None:
        self.means = _check_matrix("means", means)
        self.weights = _check_matrix("weights", weights, dim=self.means.shape[1])
        if self.weights.shape[0] != self.means.shape[0]:
            raise NCInputError(f"weights have {self.weights.shape[0]} rows but there are {self.means.shape[0]} classes")
        self.bias = None if bias is None else _check_bias(bias, self.weights.shape[0])
        self.hits = 0
        self.total = 0

    @torch.no_grad()
    def update(self, features: torch.Tensor) -> None:
        """Count the agreements of one batch ``features [B, p]``."""
        h = _check_matrix("eval_features", features, dim=self.means.shape[1])
        w, mu = self.weights.to(h.device), self.means.to(h.device)
        logits = h @ w.T
        if self.bias is not None:
            logits = logits + self.bias.to(h.device)
        # argmin_k |h - mu_k|^2 = argmin_k (|mu_k|^2 - 2 <h, mu_k>)
        dist = (mu * mu).sum(1) - 2.0 * (h @ mu.T)
        self.hits += int((logits.argmax(1) == dist.argmin(1)).sum())
        self.total += int(h.shape[0])

    @property
    def agreement(self) -> float:
        """Agreement rate in [0, 1]."""
        if self.total == 0:
            raise NCInputError("NC4 needs at least one evaluation feature")
        return self.hits / self.total


def _check_bias(bias: object, k: int) -> torch.Tensor:
    if not isinstance(bias, torch.Tensor) or bias.ndim != 1 or bias.shape[0] != k:
        shape = tuple(bias.shape) if isinstance(bias, torch.Tensor) else type(bias).__name__
        raise NCInputError(f"bias must be a tensor of shape [K] = [{k}], got {shape}")
    if not bool(torch.isfinite(bias).all()):
        raise NCInputError("bias contains NaN or infinite values")
    return bias.to(_DTYPE)


# --------------------------------------------------------------------------------------------------
# the metrics
# --------------------------------------------------------------------------------------------------


def _etf_target(k: int, like: torch.Tensor) -> torch.Tensor:
    """:math:`M^\\star = (I_K - J_K/K)/\\sqrt{K-1}`, ``[K, K]`` (unit Frobenius norm)."""
    eye = torch.eye(k, dtype=like.dtype, device=like.device)
    return (eye - 1.0 / k) / math.sqrt(k - 1)


def _structure_error(a: torch.Tensor) -> float:
    """:math:`\\lVert A/\\lVert A\\rVert_F - M^\\star\\rVert_F` for a ``[K, K]`` matrix A."""
    return float(torch.linalg.matrix_norm(a / torch.linalg.matrix_norm(a) - _etf_target(a.shape[0], a)))


def _norm_variation(rows: torch.Tensor) -> float:
    """std_k ‖v_k‖ / mean_k ‖v_k‖ for ``rows [K, p]`` (Bessel-corrected std)."""
    norms = rows.norm(dim=1)
    return float(norms.std() / norms.mean())


def _angle_error(rows: torch.Tensor) -> float:
    """mean over k ≠ k' of |cos(v_k, v_k') + 1/(K−1)| for ``rows [K, p]``."""
    k = rows.shape[0]
    unit = rows / rows.norm(dim=1, keepdim=True)
    cos = unit @ unit.T
    off = ~torch.eye(k, dtype=torch.bool, device=rows.device)
    return float((cos[off] + 1.0 / (k - 1)).abs().mean())


def _nc1_fast(stats: ClassStats, rcond: float) -> float:
    """NC1 through the thin SVD of the centred means: with :math:`M^\\top = U S V^\\top`,
    :math:`\\Sigma_B^\\dagger = K V S^{-2} V^\\top` and NC1 :math:`= \\sum_j v_j^\\top \\Sigma_W v_j / s_j^2`
    (O(Kp² ) instead of the O(p³) pseudo-inverse)."""
    k = stats.num_classes
    _, s, vh = torch.linalg.svd(stats.centred_means, full_matrices=False)  # s [min(K,p)], vh [min(K,p), p]
    if float(s[0]) == 0.0:
        return math.nan
    keep = (s * s > rcond * s[0] * s[0]) & (torch.arange(s.shape[0], device=s.device) < k - 1)
    v, s = vh[keep], s[keep]  # [r, p], [r]
    quad = ((v @ stats.within_cov) * v).sum(dim=1)  # v_j^T Σ_W v_j, [r]
    return float((quad / (s * s)).sum())


def nc_metrics_from_stats(
    stats: ClassStats,
    weights: torch.Tensor,
    *,
    nc4_agreement: float = math.nan,
    nc0_squared: bool = False,
    nc4_form: NC4Form = "agreement",
    scale: Scale = "paper",
    nc3_form: NC3Form = "alignment",
    rcond: float = 1e-12,
) -> dict[str, float]:
    """Every metric of the module docstring from class statistics, ``weights [K, p]`` and a measured NC4
    agreement rate (pass NaN when it was not measured). Returns a dict with :data:`METRIC_KEYS`."""
    if scale not in ("paper", "none"):
        raise NCInputError(f"scale must be 'paper' or 'none', got {scale!r}")
    if nc4_form not in ("agreement", "mismatch"):
        raise NCInputError(f"nc4_form must be 'agreement' or 'mismatch', got {nc4_form!r}")
    if nc3_form not in ("alignment", "self-duality"):
        raise NCInputError(f"nc3_form must be 'alignment' or 'self-duality', got {nc3_form!r}")
    k, p = stats.num_classes, stats.dim
    w = _check_matrix("weights", weights, dim=p).to(stats.means.device)
    if w.shape[0] != k:
        raise NCInputError(f"weights have {w.shape[0]} rows but the labels define K = {k} classes")
    s2 = 1.0 / k**2 if scale == "paper" else 1.0
    s3 = 1.0 / (k * p) if scale == "paper" else 1.0
    m_t = stats.centred_means  # [K, p] = M^T
    row_sum = w.sum(dim=0)  # W^T 1, [p]
    sq = float((row_sum * row_sum).sum())
    nc0_norm, nc0_sq = math.sqrt(sq) / p, sq / p
    agreement = float(nc4_agreement)
    out = {
        "nc0": nc0_sq if nc0_squared else nc0_norm,
        "nc0_norm": nc0_norm,
        "nc0_squared": nc0_sq,
        "alpha": sq / k,
        "nc1": _nc1_fast(stats, rcond),
        "nc2": s2 * _structure_error(m_t @ m_t.T),
        "nc2_norm": _norm_variation(m_t),
        "nc2_angle": _angle_error(m_t),
        "nc2w": s2 * _structure_error(w @ w.T),
        "nc2w_norm": _norm_variation(w),
        "nc2w_angle": _angle_error(w),
        "nc2m": s2 * _structure_error(w @ m_t.T),
        "nc3_alignment": s3 * float(torch.linalg.matrix_norm(w / torch.linalg.matrix_norm(w) - m_t / m_t.norm())),
        "nc4_agreement": agreement,
        "nc4_mismatch": 1.0 - agreement,
    }
    out["nc3_duality"] = out["nc2m"]
    out["nc3"] = out["nc3_alignment"] if nc3_form == "alignment" else out["nc3_duality"]
    out["nc4"] = out["nc4_agreement"] if nc4_form == "agreement" else out["nc4_mismatch"]
    return {key: out[key] for key in METRIC_KEYS}


def _prepare(
    features: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # the metrics are measurements, not a loss: a model's live parameters (requires_grad) are read detached
    h = _check_matrix("features", features.detach() if isinstance(features, torch.Tensor) else features)
    if h.shape[0] == 0:
        raise NCInputError("features are empty (N = 0)")
    w = _check_matrix("weights", weights.detach() if isinstance(weights, torch.Tensor) else weights, dim=h.shape[1])
    w = w.to(h.device)
    if w.shape[0] < 2:
        raise NCInputError(
            f"weights must have K >= 2 rows (one per class), got K = {w.shape[0]}: one class cannot collapse"
        )
    y = _check_labels(labels, h.shape[0], w.shape[0]).to(h.device)
    return h, y, w


def neural_collapse_metrics(
    features: torch.Tensor,
    labels: torch.Tensor,
    weights: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    eval_features: torch.Tensor | None = None,
    nc0_squared: bool = False,
    nc4_form: NC4Form = "agreement",
    scale: Scale = "paper",
    nc3_form: NC3Form = "alignment",
    rcond: float = 1e-12,
    chunk_size: int | None = None,
) -> dict[str, float]:
    """NC0–NC4 and their variants (module docstring) of ``features [N, p]``, ``labels [N]`` (K classes given
    by ``weights [K, p]``), with optional classifier ``bias [K]``.

    NC4 is measured on ``eval_features [N', p]`` (e.g. the test set) when given, else on ``features``. The
    statistics are accumulated by :class:`NCAccumulator` in chunks of ``chunk_size`` rows (all at once by
    default). Returns a dict with :data:`METRIC_KEYS`, each a float. Raises :class:`NCInputError` for one
    class, an empty class, a label out of range, non-finite values or mismatched shapes.
    """
    h, y, w = _prepare(features, labels, weights)
    k, p = w.shape
    step = h.shape[0] if chunk_size is None else int(chunk_size)
    if step < 1:
        raise NCInputError(f"chunk_size must be >= 1, got {chunk_size}")
    acc = NCAccumulator(k, p, device=h.device)
    for start in range(0, h.shape[0], step):
        acc.update(h[start : start + step], y[start : start + step])
    stats = acc.finalize()
    counter = NC4Counter(w, stats.means, bias.detach() if isinstance(bias, torch.Tensor) else bias)
    ev = h if eval_features is None else _check_matrix("eval_features", eval_features, dim=p).to(h.device)
    for start in range(0, max(int(ev.shape[0]), 1), step):
        counter.update(ev[start : start + step])
    return nc_metrics_from_stats(
        stats,
        w,
        nc4_agreement=counter.agreement,
        nc0_squared=nc0_squared,
        nc4_form=nc4_form,
        scale=scale,
        nc3_form=nc3_form,
        rcond=rcond,
    )


def naive_neural_collapse_metrics(
    features: torch.Tensor,
    labels: torch.Tensor,
    weights: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    eval_features: torch.Tensor | None = None,
    nc0_squared: bool = False,
    nc4_form: NC4Form = "agreement",
    scale: Scale = "paper",
    nc3_form: NC3Form = "alignment",
    rcond: float = 1e-12,
) -> dict[str, float]:
    """The literal twin of :func:`neural_collapse_metrics`: per-class loops, explicit Σ_W and Σ_B, the
    pseudo-inverse of the ``[p, p]`` matrix Σ_B by eigendecomposition, explicit double loops for the
    cosines and ``torch.cdist`` for NC4. Slow; for tests and the benchmark baseline."""
    h, y, w = _prepare(features, labels, weights)
    k, p = w.shape
    means = []
    for c in range(k):
        hc = h[y == c]
        if hc.shape[0] == 0:
            raise NCInputError(f"class(es) [{c}] have no samples; every one of the K = {k} classes needs at least one")
        means.append(hc.mean(dim=0))
    mu = torch.stack(means)  # [K, p]
    mu_g = mu.mean(dim=0)
    mbar = mu - mu_g  # [K, p]
    sigma_w = torch.zeros(p, p, dtype=_DTYPE, device=h.device)
    for i in range(h.shape[0]):
        d = (h[i] - mu[y[i]]).unsqueeze(1)
        sigma_w += d @ d.T
    sigma_w /= h.shape[0]
    sigma_b = sum(torch.outer(mbar[c], mbar[c]) for c in range(k)) / k
    evals, evecs = torch.linalg.eigh(sigma_b)
    order = torch.argsort(evals, descending=True)
    evals, evecs = evals[order], evecs[:, order]
    keep = (evals > rcond * evals[0]) & (torch.arange(p, device=h.device) < k - 1)
    pinv_b = evecs[:, keep] @ torch.diag(1.0 / evals[keep]) @ evecs[:, keep].T
    nc1 = float(torch.trace(sigma_w @ pinv_b)) / k

    def cosine_error(v: torch.Tensor) -> float:
        total = 0.0
        for a in range(k):
            for b in range(k):
                if a != b:
                    cos = float(v[a] @ v[b]) / (float(v[a].norm()) * float(v[b].norm()))
                    total += abs(cos + 1.0 / (k - 1))
        return total / (k * (k - 1))

    def norm_cv(v: torch.Tensor) -> float:
        n = torch.tensor([float(v[a].norm()) for a in range(k)], dtype=_DTYPE)
        mean = float(n.sum()) / k
        var = float(((n - mean) ** 2).sum()) / (k - 1)
        return math.sqrt(var) / mean

    m_star = (torch.eye(k, dtype=_DTYPE, device=h.device) - torch.ones(k, k, dtype=_DTYPE, device=h.device) / k) / (
        math.sqrt(k - 1)
    )

    def struct(a: torch.Tensor) -> float:
        return float(torch.sqrt(((a / torch.sqrt((a * a).sum()) - m_star) ** 2).sum()))

    s2 = 1.0 / k**2 if scale == "paper" else 1.0
    s3 = 1.0 / (k * p) if scale == "paper" else 1.0
    ones = torch.ones(k, dtype=_DTYPE, device=h.device)
    sq = float(((w.T @ ones) ** 2).sum())
    m = mbar.T  # [p, K]
    ev = _check_matrix("eval_features", h if eval_features is None else eval_features, dim=p)
    logits = ev @ w.T + (0.0 if bias is None else _check_bias(bias, k))
    nearest = torch.cdist(ev, mu).argmin(dim=1)
    agreement = float((logits.argmax(dim=1) == nearest).to(_DTYPE).mean())
    out = {
        "nc0_norm": math.sqrt(sq) / p,
        "nc0_squared": sq / p,
        "alpha": sq / k,
        "nc1": nc1,
        "nc2": s2 * struct(m.T @ m),
        "nc2_norm": norm_cv(mbar),
        "nc2_angle": cosine_error(mbar),
        "nc2w": s2 * struct(w @ w.T),
        "nc2w_norm": norm_cv(w),
        "nc2w_angle": cosine_error(w),
        "nc2m": s2 * struct(w @ m),
        "nc3_alignment": s3
        * float(torch.sqrt(((w / torch.sqrt((w * w).sum()) - m.T / torch.sqrt((m * m).sum())) ** 2).sum())),
        "nc3_duality": s2 * struct(w @ m),
        "nc4_agreement": agreement,
        "nc4_mismatch": 1.0 - agreement,
    }
    out["nc0"] = out["nc0_squared"] if nc0_squared else out["nc0_norm"]
    out["nc3"] = out["nc3_alignment"] if nc3_form == "alignment" else out["nc3_duality"]
    out["nc4"] = out["nc4_agreement"] if nc4_form == "agreement" else out["nc4_mismatch"]
    return {key: out[key] for key in METRIC_KEYS}
