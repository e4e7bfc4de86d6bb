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

Every quantity is computed in float64 on the device of the inputs (CPU or CUDA); inputs may be torch tensors or
NumPy arrays. :class:`NCAccumulator` streams over batches (memory ``O(Kp + p^2)``) with per-class shifts so that
the within-class scatter does not suffer from cancellation; :func:`naive_neural_collapse_metrics` is the literal
twin used to test it. The streaming classes are metric objects (:class:`~iclr26_theory_metrics.ops.metric.
StreamingMetric`: ``update`` / ``compute`` / ``reset``, synchronised over ``torch.distributed`` processes in
``compute``); :class:`NeuralCollapse` streams NC0–NC3 for fixed classifier weights. :data:`HIGHER_IS_BETTER`
says which way each key is better: every metric is an error that vanishes at collapse (lower is better) except
``nc4_agreement`` (and ``nc4`` in its default ``"agreement"`` form).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import torch

from iclr26_shared.errors import Iclr26Error
from iclr26_theory_metrics.ops.metric import StreamingMetric, TensorLike, as_tensor

__all__ = [
    "HIGHER_IS_BETTER",
    "METRIC_KEYS",
    "ClassStats",
    "NC4Counter",
    "NCAccumulator",
    "NCInputError",
    "NeuralCollapse",
    "higher_is_better",
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

#: Which way each key of :data:`METRIC_KEYS` is better (``nc4`` as in its default ``"agreement"`` form; see
#: :func:`higher_is_better`). NC0–NC3 and their variants measure the distance from collapse: lower is better.
HIGHER_IS_BETTER: dict[str, bool] = {key: key in ("nc4", "nc4_agreement") for key in METRIC_KEYS}


def higher_is_better(key: str, *, nc4_form: NC4Form = "agreement") -> bool:
    """Whether a larger value of metric ``key`` is better (``nc4`` depends on ``nc4_form``)."""
    if key not in HIGHER_IS_BETTER:
        raise NCInputError(f"key must be one of {', '.join(METRIC_KEYS)}, got {key!r}")
    return nc4_form == "agreement" if key == "nc4" else HIGHER_IS_BETTER[key]


_DTYPE = torch.float64


class NCInputError(Iclr26Error, ValueError):
    """Features, labels or weights that the metrics cannot use; the message names the argument."""


# --------------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------------


def _check_matrix(name: str, x: object, *, dim: int | None = None) -> torch.Tensor:
    x = as_tensor(x)
    if not isinstance(x, torch.Tensor):
        raise NCInputError(f"{name} must be a torch.Tensor or a NumPy array, got {type(x).__name__}")
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
    labels = as_tensor(labels)
    if not isinstance(labels, torch.Tensor):
        raise NCInputError(f"labels must be a torch.Tensor or a NumPy array, got {type(labels).__name__}")
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


class NCAccumulator(StreamingMetric):
    """Streaming class means and pooled within-class covariance (one pass, float64); a metric object.

    For each class k the first batch that contains it fixes a shift :math:`c_k` (that batch's class mean). The
    accumulator keeps :math:`n_k`, :math:`s_k = \\sum_{i\\in k}(h_i - c_k)` and the pooled scatter
    :math:`S = \\sum_i (h_i - c_{y_i})(h_i - c_{y_i})^\\top`; then :math:`\\mu_k = c_k + s_k/n_k` and
    :math:`N\\Sigma_W = S - \\sum_k n_k (\\mu_k - c_k)(\\mu_k - c_k)^\\top`. The shifts keep the subtraction
    well conditioned even when the features have collapsed (tiny :math:`\\Sigma_W`, large means).

    :meth:`compute` returns the :class:`ClassStats` of every batch seen, over all processes when
    ``torch.distributed`` is initialised: the processes' counts and count-weighted means are summed (all-reduce)
    into the global class means, then each process's scatter about its own means plus
    :math:`\\sum_k n_k^{(r)}(\\mu_k^{(r)} - \\mu_k)(\\mu_k^{(r)} - \\mu_k)^\\top` (the parallel-variance
    combination, exact and free of cancellation). :meth:`finalize` is :meth:`compute_local` (this process only),
    :meth:`reset` starts again. A process that saw no batch takes part with zeros (on ``device``, CPU by default).

    Usage::

        acc = NCAccumulator(num_classes=10, dim=512)
        for x, y in loader:
            acc.update(model.features(x), y)
        stats = acc.compute()
    """

    def __init__(
        self,
        num_classes: int,
        dim: int,
        *,
        device: torch.device | str | None = None,
        process_group: Any = None,
        dist_sync_on_compute: bool = True,
    ) -> None:
        if not isinstance(num_classes, int) or num_classes < 2:
            raise NCInputError(f"num_classes must be an integer >= 2 (neural collapse needs K >= 2), got {num_classes}")
        if not isinstance(dim, int) or dim < 1:
            raise NCInputError(f"dim must be a positive integer, got {dim}")
        super().__init__(process_group=process_group, dist_sync_on_compute=dist_sync_on_compute)
        self.num_classes = num_classes
        self.dim = dim
        self.device = torch.device(device) if device is not None else None
        self.reset()

    def reset(self) -> None:
        """Forget every batch seen."""
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
        """Samples seen so far (by this process)."""
        return 0 if self._counts is None else int(self._counts.sum())

    @torch.no_grad()
    def update(self, features: TensorLike, labels: TensorLike) -> None:
        """Add a batch: ``features [B, p]`` (any float dtype), ``labels [B]`` in ``[0, K)`` (torch or NumPy)."""
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

    def _local(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """This process's ``(counts [K], means [K, p] (0 for unseen classes), scatter about them [p, p])``."""
        if self._counts is None:
            self._init(self.device or torch.device("cpu"))
        assert self._shift is not None and self._sum is not None and self._scatter is not None
        assert self._counts is not None
        n = self._counts.to(_DTYPE).unsqueeze(1)  # [K, 1]
        mean_shift = self._sum / n.clamp_min(1.0)  # [K, p]; unseen classes: 0
        means = torch.where(n > 0, self._shift + mean_shift, torch.zeros_like(mean_shift))
        scatter = self._scatter - (mean_shift * n).T @ mean_shift
        return self._counts.clone(), means, scatter

    def _compute(self, *, synced: bool) -> ClassStats:
        counts, means, scatter = self._local()
        if synced:
            n_local = counts.to(_DTYPE).unsqueeze(1)
            counts = self._all_reduce(counts)
            n = counts.to(_DTYPE).unsqueeze(1)
            global_means = self._all_reduce(means * n_local) / n.clamp_min(1.0)
            d = torch.where(n_local > 0, means - global_means, torch.zeros_like(means))
            scatter = self._all_reduce(scatter + (d * n_local).T @ d)
            means = global_means
        total = int(counts.sum())
        if total == 0:
            raise NCInputError("no features were accumulated (empty data set)")
        empty = torch.nonzero(counts == 0).flatten().tolist()
        if empty:
            raise NCInputError(
                f"class(es) {empty} have no samples; every one of the K = {self.num_classes} classes needs at least one"
            )
        within = 0.5 * (scatter + scatter.T) / float(total)
        return ClassStats(means=means, counts=counts, within_cov=within)

    def compute(self) -> ClassStats:
        """The :class:`ClassStats` of every batch seen (all processes under ``torch.distributed``); raises
        :class:`NCInputError` when a class received no samples."""
        return super().compute()

    def finalize(self) -> ClassStats:
        """The :class:`ClassStats` of this process's batches (:meth:`compute_local`)."""
        return self._compute(synced=False)


class NC4Counter(StreamingMetric):
    """Streaming NC4: counts samples whose linear-classifier prediction equals the nearest class mean.

    ``weights [K, p]``, optional ``bias [K]`` and the class ``means [K, p]`` are fixed; :meth:`update` takes
    ``features [B, p]``; :meth:`compute` is the agreement rate over all samples seen (all processes under
    ``torch.distributed``: hits and totals are summed), :attr:`agreement` this process's. Higher is better.
    """

    higher_is_better: ClassVar[bool | None] = True

    def __init__(
        self,
        weights: TensorLike,
        means: TensorLike,
        bias: TensorLike | None = None,
        *,
        process_group: Any = None,
        dist_sync_on_compute: bool = True,
    ) -> None:
        super().__init__(process_group=process_group, dist_sync_on_compute=dist_sync_on_compute)
        self.means = _check_matrix("means", means)
        self.weights = _check_matrix("weights", weights, dim=self.means.shape[1])
        if self.weights.shape[0] != self.means.shape[0]:
            raise NCInputError(f"weights have {self.weights.shape[0]} rows but there are {self.means.shape[0]} classes")
        self.bias = None if bias is None else _check_bias(bias, self.weights.shape[0])
        self.reset()

    def reset(self) -> None:
        """Forget every batch seen."""
        self.hits = 0
        self.total = 0

    @torch.no_grad()
    def update(self, features: TensorLike) -> None:
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

    def _compute(self, *, synced: bool) -> float:
        hits, total = self.hits, self.total
        if synced:
            both = self._all_reduce(torch.tensor([hits, total], dtype=torch.int64, device=self.means.device))
            hits, total = int(both[0]), int(both[1])
        if total == 0:
            raise NCInputError("NC4 needs at least one evaluation feature")
        return hits / total

    def compute(self) -> float:
        """The agreement rate in [0, 1] over every batch seen (all processes under ``torch.distributed``)."""
        return super().compute()

    @property
    def agreement(self) -> float:
        """This process's agreement rate in [0, 1]."""
        return self._compute(synced=False)


class NeuralCollapse(StreamingMetric):
    """NC0–NC3 as a metric object: ``update(features [B, p], labels [B])`` batch by batch for fixed classifier
    ``weights [K, p]``; :meth:`compute` returns the dict of :func:`nc_metrics_from_stats` (all processes under
    ``torch.distributed``). NC4 needs the final class means, so it takes a second pass: :meth:`nc4_counter`
    gives an :class:`NC4Counter` on the computed means; run it over the evaluation features and pass its
    ``compute()`` as ``nc4_agreement`` (NaN otherwise). ``higher_is_better`` is per key
    (:data:`HIGHER_IS_BETTER`). Keyword options as :func:`neural_collapse_metrics`.
    """

    higher_is_better: ClassVar[dict[str, bool]] = HIGHER_IS_BETTER  # pyright: ignore[reportIncompatibleVariableOverride]

    def __init__(
        self,
        weights: TensorLike,
        bias: TensorLike | None = None,
        *,
        nc4_agreement: float = math.nan,
        nc0_squared: bool = False,
        nc4_form: NC4Form = "agreement",
        scale: Scale = "paper",
        nc3_form: NC3Form = "alignment",
        rcond: float = 1e-12,
        process_group: Any = None,
        dist_sync_on_compute: bool = True,
    ) -> None:
        super().__init__(process_group=process_group, dist_sync_on_compute=dist_sync_on_compute)
        self.weights = _check_matrix("weights", weights)
        k, p = self.weights.shape
        if k < 2:
            raise NCInputError(f"weights must have K >= 2 rows (one per class), got K = {k}: one class cannot collapse")
        self.bias = None if bias is None else _check_bias(bias, k)
        self.nc4_agreement = float(nc4_agreement)
        self.options: dict[str, Any] = {
            "nc0_squared": nc0_squared,
            "nc4_form": nc4_form,
            "scale": scale,
            "nc3_form": nc3_form,
            "rcond": rcond,
        }
        self.stats = NCAccumulator(
            int(k),
            int(p),
            device=self.weights.device,
            process_group=process_group,
            dist_sync_on_compute=dist_sync_on_compute,
        )

    def reset(self) -> None:
        """Forget every batch seen."""
        self.stats.reset()

    def update(self, features: TensorLike, labels: TensorLike) -> None:
        """Add a batch ``features [B, p]``, ``labels [B]`` (torch or NumPy)."""
        self.stats.update(_check_matrix("features", features).to(self.weights.device), labels)

    def _compute(self, *, synced: bool) -> dict[str, float]:
        stats = self.stats._compute(synced=synced)  # pyright: ignore[reportPrivateUsage]
        return nc_metrics_from_stats(stats, self.weights, nc4_agreement=self.nc4_agreement, **self.options)

    def compute(self) -> dict[str, float]:
        """Every metric of :data:`METRIC_KEYS` (NC4 as ``nc4_agreement``, NaN unless given)."""
        return super().compute()

    def nc4_counter(self) -> NC4Counter:
        """An :class:`NC4Counter` for the second pass, on the class means of :meth:`compute`."""
        return NC4Counter(
            self.weights,
            self.stats.compute().means,
            self.bias,
            process_group=self.process_group,
            dist_sync_on_compute=self.dist_sync_on_compute,
        )


def _check_bias(bias: object, k: int) -> torch.Tensor:
    bias = as_tensor(bias)
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
    features: TensorLike, labels: TensorLike, weights: TensorLike
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # the metrics are measurements, not a loss: a model's live parameters (requires_grad) are read detached
    h = _check_matrix("features", features)
    if h.shape[0] == 0:
        raise NCInputError("features are empty (N = 0)")
    w = _check_matrix("weights", weights, dim=h.shape[1])
    w = w.to(h.device)
    if w.shape[0] < 2:
        raise NCInputError(
            f"weights must have K >= 2 rows (one per class), got K = {w.shape[0]}: one class cannot collapse"
        )
    y = _check_labels(labels, h.shape[0], w.shape[0]).to(h.device)
    return h, y, w


def neural_collapse_metrics(
    features: TensorLike,
    labels: TensorLike,
    weights: TensorLike,
    *,
    bias: TensorLike | None = None,
    eval_features: TensorLike | None = None,
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
    counter = NC4Counter(w, stats.means, bias)
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
    features: TensorLike,
    labels: TensorLike,
    weights: TensorLike,
    *,
    bias: TensorLike | None = None,
    eval_features: TensorLike | None = None,
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
