r"""HSIC, its permutation test and the split-half dependence of a subset (Zhang, Li, Liu, Chen, Xu: "Unlearning
Evaluation through Subset Statistical Independence", ICLR 2026, arXiv 2603.00587, §3; HSIC after Gretton et al.,
2005/2007 and Song et al., 2012).

For paired samples :math:`X \in \mathbb R^{n\times p}`, :math:`Y \in \mathbb R^{n\times q}` with Gram matrices
:math:`K_{ij} = k(x_i, x_j)`, :math:`L_{ij} = l(y_i, y_j)` (``[n, n]``) and the centring matrix
:math:`H = I - \frac1n \mathbf 1\mathbf 1^\top`:

* biased (Gretton et al., 2005; the paper's estimator): :math:`\mathrm{HSIC}_b = \operatorname{tr}(KHLH)/(n-1)^2`;
* unbiased (Song et al., 2012), with :math:`\tilde K, \tilde L` the Grams with a zeroed diagonal:

  .. math:: \mathrm{HSIC}_u = \frac{1}{n(n-3)}\Big[\operatorname{tr}(\tilde K\tilde L)
            + \frac{\mathbf 1^\top\tilde K\mathbf 1\,\mathbf 1^\top\tilde L\mathbf 1}{(n-1)(n-2)}
            - \frac{2}{n-2}\mathbf 1^\top\tilde K\tilde L\mathbf 1\Big]   \quad (n \ge 4);

* block (linear time for a fixed block size B; Zhang et al., 2018 "Large-scale kernel methods for independence
  testing"): the mean of :math:`\mathrm{HSIC}_u` over the :math:`\lfloor n/B\rfloor` disjoint blocks of B rows, an
  unbiased estimate of the same population HSIC in :math:`O(nBd)` time and :math:`O(B^2)` memory per block.

Kernels: Gaussian RBF :math:`k(x, x') = \exp(-\lVert x - x'\rVert^2 / 2\sigma^2)` with the paper's bandwidth
:math:`\sigma = \sqrt{\dim}` by default (``sigma="median"``: the median heuristic), or ``"linear"``
(:math:`k(x, x') = x^\top x'`).

Permutation test: HSIC of :math:`(X, Y_\pi)` for B random permutations π of Y's rows; because
:math:`H L_\pi H = (HLH)_\pi`, both Grams are built once and each statistic is one row/column selection of the
cached Gram and one product (:func:`hsic_permutation_null`; :func:`naive_hsic_permutation_null` is the twin that
rebuilds the Grams for every permutation). The speed-up over the twin comes from caching the Grams: a batched
gather of all B permuted Grams was measured slower than the loop over the cached Gram (CPU, n = 200: 0.21 vs
0.09 s per 200 permutations), so the loop is kept. p-value = (1 + #{HSIC_π ≥ HSIC_obs}) / (1 + B).

Split-half dependence (the paper's §3.2): a subset S of m samples is split at random into halves
:math:`S_1, S_2` of m//2 each; with a representation map h, :math:`H(S, h) = \mathrm{HSIC}(h(S_1), h(S_2))` pairing
the i-th element of :math:`S_1` with the i-th of :math:`S_2`; 200 random shuffles of :math:`S_2` give a
*distribution* of H values (:func:`split_half_dependence`). Its mean over the shuffles has a closed form
(:func:`split_half_mean`): for the biased estimator with Grams K of S₁ and L of S₂ (n = m//2 rows each),

.. math:: \mathbb E_\pi[H] = \frac{\operatorname{tr}(HKH)\,(\bar d_L - \bar l)}{(n-1)^2}
          \;\overset{\text{RBF}}{=}\; \frac{(1 - \bar k)(1 - \bar l)}{n - 1},

with :math:`\bar k, \bar l` the means of the off-diagonal entries and :math:`\bar d_L` the mean diagonal of L
(1 for the RBF kernel): at the paper's bandwidth √d the statistic's level measures the *spread* of the features
(one minus their mean kernel similarity), and the shuffles only add a spread around it.
A target subset is declared *out of training* ("forgotten") when
:math:`\mathrm{JSD}(H(S_{tar}), H(S_{OOT})) < \mathrm{JSD}(H(S_{tar}), H(S_{IT}))` (:func:`classify_subset`), with S_IT
a subset of the retained training data and S_OOT one of unseen data; the Mann–Whitney U test is the alternative
rule.

All statistics are computed in float64 on the inputs' device (CPU or CUDA).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from iclr26_shared.errors import Iclr26Error
from iclr26_theory_metrics.ops.metric import TensorLike, as_tensor

__all__ = [
    "HSICInputError",
    "SubsetDecision",
    "classify_subset",
    "f1_score",
    "gram",
    "hsic",
    "hsic_from_grams",
    "hsic_permutation_null",
    "hsic_test",
    "jsd",
    "mmd2_unbiased",
    "naive_hsic",
    "naive_hsic_permutation_null",
    "split_half_dependence",
    "split_half_mean",
]

Kernel = Literal["rbf", "linear"]
Estimator = Literal["biased", "unbiased", "block"]
Sigma = float | Literal["sqrt-dim", "median"] | None
_DTYPE = torch.float64
#: Largest number of float64 entries one batch of split Grams may hold (≈ 128 MiB).
_GATHER_BUDGET = 1 << 24
#: The median heuristic reads at most this many rows (an evenly spaced sample of larger inputs), so that its
#: pairwise-distance matrix stays below 8 MiB whatever the input size.
_MEDIAN_ROWS = 1000


class HSICInputError(Iclr26Error, ValueError):
    """Inputs HSIC cannot use (too few rows, mismatched lengths, NaN/inf, wrong shape); the message names the
    argument."""


def _as_2d(x: TensorLike, name: str, *, min_rows: int = 4) -> torch.Tensor:
    x = as_tensor(x, detach=False)  # pyright: ignore[reportAssignmentType]  # NumPy arrays too; gradients kept
    if not isinstance(x, torch.Tensor):
        raise HSICInputError(f"{name}: expected a torch.Tensor or a NumPy array, got {type(x).__name__}")
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise HSICInputError(f"{name}: expected shape [n, d] (or [n]), got {tuple(x.shape)}")
    if x.shape[0] < min_rows:
        raise HSICInputError(f"{name}: needs at least {min_rows} rows (samples), got {x.shape[0]}")
    if x.shape[1] < 1:
        raise HSICInputError(f"{name}: has no feature columns")
    x = x.to(_DTYPE)
    if not bool(torch.isfinite(x).all()):
        raise HSICInputError(f"{name}: contains NaN or inf")
    return x


def _pair(x: TensorLike, y: TensorLike, min_rows: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = _as_2d(x, "X", min_rows=min_rows), _as_2d(y, "Y", min_rows=min_rows)
    if x.shape[0] != y.shape[0]:
        raise HSICInputError(
            f"X and Y must have the same number of rows (paired samples), got {x.shape[0]} and {y.shape[0]}"
        )
    return x, y.to(x.device)


def bandwidth(x: torch.Tensor, sigma: Sigma = None) -> float:
    """The RBF bandwidth σ for features ``x [n, d]``: ``None``/``"sqrt-dim"`` → √d (the paper's default),
    ``"median"`` → the median pairwise distance between distinct rows (the median heuristic; on an evenly spaced
    sample of at most ``_MEDIAN_ROWS`` rows of a larger input, so that memory stays bounded), a number → itself."""
    if sigma is None or sigma == "sqrt-dim":
        return math.sqrt(x.shape[-1])
    if sigma == "median":
        if x.shape[-2] > _MEDIAN_ROWS:
            x = x[torch.linspace(0, x.shape[-2] - 1, _MEDIAN_ROWS, device=x.device).long()]
        d = torch.cdist(x, x)
        off = d[~torch.eye(x.shape[-2], dtype=torch.bool, device=x.device)]
        med = float(off.median()) if off.numel() else 0.0
        return med if med > 0 else 1.0
    if isinstance(sigma, str) or not (isinstance(sigma, int | float) and sigma > 0 and math.isfinite(sigma)):
        raise HSICInputError(f"sigma: expected a positive number, 'sqrt-dim', 'median' or None, got {sigma!r}")
    return float(sigma)


def gram(x: torch.Tensor, kernel: Kernel = "rbf", sigma: Sigma = None) -> torch.Tensor:
    """Gram matrix ``[..., n, n]`` of rows ``x [..., n, d]`` (float64): RBF exp(−‖x−x'‖²/2σ²) or linear x·x'.
    With ``sigma="median"`` and batched ``x`` every batch item gets its own median (never one median over the
    stacked rows, which would build a pairwise matrix of all of them)."""
    x = x.to(_DTYPE)
    if kernel == "linear":
        return x @ x.transpose(-1, -2)
    if kernel != "rbf":
        raise HSICInputError(f"kernel: expected 'rbf' or 'linear', got {kernel!r}")
    if sigma == "median" and x.ndim > 2:
        flat = x.reshape(-1, *x.shape[-2:])
        s2 = torch.tensor([bandwidth(item, sigma) ** 2 for item in flat], dtype=_DTYPE, device=x.device)
        s2 = s2.reshape(*x.shape[:-2], 1, 1)
    else:
        s2 = torch.tensor(bandwidth(x, sigma) ** 2, dtype=_DTYPE, device=x.device)
    sq = (x * x).sum(-1)
    d2 = (sq[..., :, None] + sq[..., None, :] - 2.0 * x @ x.transpose(-1, -2)).clamp_min(0.0)
    return torch.exp(-d2 / (2.0 * s2))


def _center(k: torch.Tensor) -> torch.Tensor:
    """HKH for Grams ``[..., n, n]`` (double centring)."""
    return k - k.mean(-1, keepdim=True) - k.mean(-2, keepdim=True) + k.mean((-1, -2), keepdim=True)


def _zero_diag(k: torch.Tensor) -> torch.Tensor:
    return k - torch.diag_embed(torch.diagonal(k, dim1=-2, dim2=-1))


def hsic_from_grams(
    k: torch.Tensor, l: torch.Tensor, estimator: Literal["biased", "unbiased"] = "biased"
) -> torch.Tensor:  # noqa: E741
    """HSIC from Gram matrices ``k, l [..., n, n]`` (batched over leading dims); returns ``[...]``."""
    n = k.shape[-1]
    if estimator == "biased":
        return (_center(k) * l).sum((-1, -2)) / (n - 1) ** 2
    if estimator != "unbiased":
        raise HSICInputError(f"estimator: expected 'biased' or 'unbiased' here, got {estimator!r}")
    if n < 4:
        raise HSICInputError(f"the unbiased estimator needs at least 4 samples, got {n}")
    kt, lt = _zero_diag(k), _zero_diag(l)
    term1 = (kt * lt).sum((-1, -2))
    term2 = kt.sum((-1, -2)) * lt.sum((-1, -2)) / ((n - 1) * (n - 2))
    term3 = 2.0 / (n - 2) * (kt.sum(-2) * lt.sum(-1)).sum(-1)  # 1ᵀ K̃ L̃ 1 = Σ_j (Σ_i K̃_ij)(Σ_q L̃_jq)
    return (term1 + term2 - term3) / (n * (n - 3))


def hsic(
    x: TensorLike,
    y: TensorLike,
    kernel: Kernel = "rbf",
    sigma: Sigma = None,
    estimator: Estimator = "biased",
    *,
    block_size: int = 64,
) -> torch.Tensor:
    """HSIC(X, Y) of paired rows ``x [n, p]``, ``y [n, q]`` (1-D inputs are one column); returns a 0-dim float64
    tensor on x's device (differentiable). ``estimator="block"`` averages the unbiased estimator over disjoint
    blocks of ``block_size`` rows (linear time in n; the last ``n mod block_size`` rows are dropped). σ is chosen
    per side (:func:`bandwidth`). Raises :class:`HSICInputError` on < 4 rows, mismatched lengths or NaN."""
    x, y = _pair(x, y)
    if estimator == "block":
        if block_size < 4:
            raise HSICInputError(f"block_size: expected at least 4, got {block_size}")
        nb = x.shape[0] // block_size
        if nb < 1:
            raise HSICInputError(
                f"X: the block estimator needs at least block_size = {block_size} rows, got {x.shape[0]}"
            )
        sx = bandwidth(x, sigma) if kernel == "rbf" else None
        sy = bandwidth(y, sigma) if kernel == "rbf" else None
        xb = x[: nb * block_size].reshape(nb, block_size, -1)
        yb = y[: nb * block_size].reshape(nb, block_size, -1)
        return hsic_from_grams(gram(xb, kernel, sx), gram(yb, kernel, sy), "unbiased").mean()
    return hsic_from_grams(gram(x, kernel, sigma), gram(y, kernel, sigma), estimator)


def naive_hsic(
    x: TensorLike, y: TensorLike, kernel: Kernel = "rbf", sigma: Sigma = None, estimator: Estimator = "biased"
) -> torch.Tensor:
    """The literal twin of :func:`hsic` (biased/unbiased): explicit loops for the Grams, the matrix H and the
    textbook formulas (tests only; O(n²) Python loops)."""
    x, y = _pair(x, y)
    n = x.shape[0]

    def k_of(a: torch.Tensor, i: int, j: int, s: float) -> torch.Tensor:
        if kernel == "linear":
            return a[i] @ a[j]
        return torch.exp(-((a[i] - a[j]) ** 2).sum() / (2 * s * s))

    sx, sy = bandwidth(x, sigma), bandwidth(y, sigma)
    k = torch.stack([torch.stack([k_of(x, i, j, sx) for j in range(n)]) for i in range(n)])
    l = torch.stack([torch.stack([k_of(y, i, j, sy) for j in range(n)]) for i in range(n)])  # noqa: E741
    if estimator == "biased":
        h = torch.eye(n, dtype=_DTYPE, device=x.device) - 1.0 / n
        return torch.trace(k @ h @ l @ h) / (n - 1) ** 2
    kt, lt = k.clone(), l.clone()
    kt.fill_diagonal_(0)
    lt.fill_diagonal_(0)
    one = torch.ones(n, dtype=_DTYPE, device=x.device)
    return (
        torch.trace(kt @ lt)
        + (one @ kt @ one) * (one @ lt @ one) / ((n - 1) * (n - 2))
        - 2 / (n - 2) * one @ kt @ lt @ one
    ) / (n * (n - 3))


def _permutations(n: int, count: int, generator: torch.Generator | None, device: torch.device) -> torch.Tensor:
    """``[count, n]`` independent uniform permutations (argsort of uniform noise: one call, vectorised)."""
    noise = torch.rand(count, n, generator=generator, dtype=_DTYPE)
    return noise.argsort(-1).to(device)


def _permuted_stats(kc: torch.Tensor, l: torch.Tensor, perms: torch.Tensor, scale: float) -> torch.Tensor:  # noqa: E741
    """Σ_ij (HKH)_ij L_{π(i)π(j)} · scale for each row π of ``perms [B, n]``: one row and one column selection of
    the cached L per permutation (measured faster on CPU than one batched gather of all B, and O(n²) memory)."""
    out = torch.empty(perms.shape[0], dtype=kc.dtype, device=kc.device)
    for b, p in enumerate(perms):
        out[b] = (l.index_select(0, p).index_select(1, p) * kc).sum()
    return out * scale


def hsic_permutation_null(
    x: TensorLike,
    y: TensorLike,
    n_permutations: int = 200,
    *,
    kernel: Kernel = "rbf",
    sigma: Sigma = None,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Biased HSIC of ``(x, y)`` and of ``(x, y[π_b])`` for ``n_permutations`` random permutations π_b, all from
    the two Grams built once (the permuted Gram is a row/column selection); returns ``(observed [], null [B])`` in
    float64."""
    x, y = _pair(x, y)
    if n_permutations < 1:
        raise HSICInputError(f"n_permutations: expected at least 1, got {n_permutations}")
    n = x.shape[0]
    kc, l = _center(gram(x, kernel, sigma)), gram(y, kernel, sigma)  # noqa: E741
    scale = 1.0 / (n - 1) ** 2
    perms = _permutations(n, n_permutations, generator, x.device)
    return (kc * l).sum() * scale, _permuted_stats(kc, l, perms, scale)


def naive_hsic_permutation_null(
    x: torch.Tensor,
    y: torch.Tensor,
    n_permutations: int = 200,
    *,
    kernel: Kernel = "rbf",
    sigma: Sigma = None,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loop twin of :func:`hsic_permutation_null`: one full :func:`hsic` call per permutation (same permutations
    for the same generator state)."""
    x, y = _pair(x, y)
    perms = _permutations(x.shape[0], n_permutations, generator, x.device)
    observed = hsic(x, y, kernel, sigma)
    null = torch.stack([hsic(x, y[p], kernel, sigma) for p in perms])  # σ (√d or median) ignores row order
    return observed, null


def hsic_test(
    x: TensorLike,
    y: TensorLike,
    n_permutations: int = 200,
    *,
    kernel: Kernel = "rbf",
    sigma: Sigma = None,
    generator: torch.Generator | None = None,
) -> tuple[float, float]:
    """Permutation test of independence: ``(HSIC_b, p-value)`` with p = (1 + #{null ≥ observed}) / (1 + B)."""
    obs, null = hsic_permutation_null(x, y, n_permutations, kernel=kernel, sigma=sigma, generator=generator)
    return float(obs), (1.0 + float((null >= obs).sum())) / (1.0 + n_permutations)


def split_half_dependence(
    source: torch.Tensor | torch.nn.Module,
    subset: torch.Tensor | Sequence[int] | None = None,
    n_shuffles: int = 200,
    *,
    layer: Literal["features", "logits"] = "features",
    kernel: Kernel = "rbf",
    sigma: Sigma = None,
    estimator: Literal["biased", "unbiased"] = "biased",
    resplit: bool = False,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The split-half dependence distribution ``[n_shuffles]`` (float64) of a subset S (the paper's §3.2).

    ``source`` is either a feature matrix ``[N, d]`` (then ``subset`` holds row indices into it, None = all rows) or
    a model with ``features(x)`` and ``classifier`` (then ``subset`` is the input batch ``[m, ...]``; ``layer``
    picks the penultimate features or the logits). S is split at random into halves of m//2 (an odd sample is
    dropped); each value is HSIC(h(S₁), h(S₂)[π]) for a random shuffle π of S₂. ``resplit=True`` draws a fresh split
    for every value (a documented variant; the paper shuffles S₂ of one split); its bandwidth is read once from the
    subset's m distinct rows (√d, or the median of their pairwise distances), and the splits are processed in
    chunks, so memory is O(m² + chunk·(m/2)²) whatever ``n_shuffles`` (never the pairwise matrix of all the
    splits' stacked rows)."""
    feats = _subset_features(source, subset, layer)
    m = feats.shape[0]
    if m < 8:
        raise HSICInputError(f"subset: needs at least 8 samples (two halves of 4), got {m}")
    if n_shuffles < 1:
        raise HSICInputError(f"n_shuffles: expected at least 1, got {n_shuffles}")
    half = m // 2
    if resplit:
        splits = _permutations(m, n_shuffles, generator, feats.device)
        s = bandwidth(feats, sigma) if kernel == "rbf" else None  # one σ from the m distinct rows
        chunk = max(1, _GATHER_BUDGET // (half * max(half, feats.shape[1])))
        out = []
        for start in range(0, n_shuffles, chunk):
            sp = splits[start : start + chunk]
            a, b = feats[sp[:, :half]], feats[sp[:, half : 2 * half]]  # [c, half, d]
            out.append(hsic_from_grams(gram(a, kernel, s), gram(b, kernel, s), estimator))
        return torch.cat(out)
    split = _permutations(m, 1, generator, feats.device)[0]
    s1, s2 = feats[split[:half]], feats[split[half : 2 * half]]
    k, l = gram(s1, kernel, sigma), gram(s2, kernel, sigma)  # noqa: E741
    perms = _permutations(half, n_shuffles, generator, feats.device)
    if estimator == "biased":
        return _permuted_stats(_center(k), l, perms, 1.0 / (half - 1) ** 2)
    return torch.stack([hsic_from_grams(k, l[p][:, p], "unbiased") for p in perms])


def split_half_mean(
    features: TensorLike,
    subset: torch.Tensor | Sequence[int] | None = None,
    *,
    kernel: Kernel = "rbf",
    sigma: Sigma = None,
    generator: torch.Generator | None = None,
) -> float:
    """The exact mean over all shuffles π of S₂ of the biased split-half H (the closed form in the module
    docstring), for the split :func:`split_half_dependence` draws from the same ``generator`` state; O(m²), no
    shuffles. ``features [N, d]`` with row indices ``subset`` (None = all rows)."""
    feats = _subset_features(features, subset, "features")
    m = feats.shape[0]
    if m < 8:
        raise HSICInputError(f"subset: needs at least 8 samples (two halves of 4), got {m}")
    half = m // 2
    split = _permutations(m, 1, generator, feats.device)[0]
    k = gram(feats[split[:half]], kernel, sigma)
    l = gram(feats[split[half : 2 * half]], kernel, sigma)  # noqa: E741
    off = ~torch.eye(half, dtype=torch.bool, device=feats.device)
    return float(torch.diagonal(_center(k)).sum() * (l.diagonal().mean() - l[off].mean()) / (half - 1) ** 2)


def _subset_features(
    source: TensorLike | torch.nn.Module, subset: torch.Tensor | Sequence[int] | None, layer: str
) -> torch.Tensor:
    if isinstance(source, torch.nn.Module):
        if subset is None or not isinstance(subset, torch.Tensor):
            raise HSICInputError("subset: with a model, pass the subset's inputs as a tensor [m, ...]")
        features = getattr(source, "features", None)
        if not callable(features):
            raise HSICInputError("source: the model needs a features(x) method (penultimate representation)")
        was = source.training
        source.eval()
        if layer not in ("features", "logits"):
            raise HSICInputError(f"layer: expected 'features' or 'logits', got {layer!r}")
        with torch.no_grad():
            h = source(subset) if layer == "logits" else features(subset)
        if not isinstance(h, torch.Tensor):
            raise HSICInputError("source: features(x) must return a tensor")
        source.train(was)
        return _as_2d(h.flatten(1), "features", min_rows=1)
    feats = _as_2d(source, "features", min_rows=1)
    if subset is None:
        return feats
    idx = torch.as_tensor(subset, dtype=torch.long, device=feats.device)
    if idx.ndim != 1:
        raise HSICInputError(f"subset: expected a 1-D index tensor, got shape {tuple(idx.shape)}")
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= feats.shape[0]):
        raise HSICInputError(f"subset: indices must lie in [0, {feats.shape[0]})")
    return feats[idx]


def jsd(p_samples: torch.Tensor, q_samples: torch.Tensor, edges: torch.Tensor) -> float:
    """Jensen–Shannon divergence (base 2, in [0, 1]) between the histograms of two samples on shared bin
    ``edges`` (values outside are clipped into the end bins); via :func:`scipy.spatial.distance.jensenshannon`,
    which returns the square root of the divergence."""
    from scipy.spatial.distance import jensenshannon

    nb = edges.numel() - 1

    def hist(v: torch.Tensor) -> list[float]:
        idx = (torch.bucketize(v.double().cpu(), edges.double().cpu(), right=True) - 1).clamp(0, nb - 1)
        return torch.bincount(idx, minlength=nb).double().tolist()

    return float(jensenshannon(hist(p_samples), hist(q_samples), base=2.0)) ** 2


@dataclass(frozen=True)
class SubsetDecision:
    """The decision on one target subset.

    Attributes:
        out_of_training: True when the target is judged *not* in training (unlearned / unseen).
        jsd_it: JSD(H(S_tar), H(S_IT)).
        jsd_oot: JSD(H(S_tar), H(S_OOT)).
        mwu_p_it: Mann–Whitney U two-sided p-value of H(S_tar) vs H(S_IT).
        mwu_p_oot: Mann–Whitney U two-sided p-value of H(S_tar) vs H(S_OOT).
        tied: the rule's two scores were equal (typically both JSDs saturated at 1: the target's histogram shares
            no bin with either reference), so ``tie_break`` decided.
    """

    out_of_training: bool
    jsd_it: float
    jsd_oot: float
    mwu_p_it: float
    mwu_p_oot: float
    tied: bool = False


#: Two decision scores closer than this are a tie (float rounding of saturated JSDs / equal p-values).
_TIE_TOL = 1e-12


def classify_subset(
    target: torch.Tensor,
    in_training: torch.Tensor,
    out_of_training: torch.Tensor,
    *,
    bins: int = 30,
    rule: Literal["jsd", "mann-whitney"] = "jsd",
    tie_break: Literal["nearest-median", "in-training"] = "nearest-median",
) -> SubsetDecision:
    """The paper's decision protocol on three split-half dependence distributions ``[B]``: "out of training" iff
    JSD(target, OOT) < JSD(target, IT), histograms on ``bins`` equal bins over the pooled range of all three
    (``rule="mann-whitney"``: iff the Mann–Whitney U p-value against OOT exceeds the one against IT, i.e. the
    target is less distinguishable from the unseen reference).

    Ties. When the target's histogram shares no bin with either reference both JSDs are exactly 1 (and both
    Mann–Whitney p-values equal), and the strict rule says "in training" whatever the data. The paper does not
    say what a tie means; ``tie_break`` decides it:
    ``"nearest-median"`` (default) picks the reference whose median H is nearer the target's, the limit of the JSD
    comparison as the bins widen; ``"in-training"`` keeps the literal strict rule (a tie reads "in"). Scores within
    ``_TIE_TOL`` (1e-12) of each other are a tie: two saturated JSDs can differ by float rounding alone (seen as 1
    vs 1 − 1.1e-16 on the moment-matched null's quantiles), which the strict rule would otherwise read as "in"."""
    from scipy.stats import mannwhitneyu

    allv = torch.cat([target, in_training, out_of_training]).double().cpu()
    lo, hi = float(allv.min()), float(allv.max())
    if hi <= lo:
        hi = lo + 1e-12
    edges = torch.linspace(lo, hi, bins + 1, dtype=torch.float64)
    j_it, j_oot = jsd(target, in_training, edges), jsd(target, out_of_training, edges)
    t = target.double().cpu().numpy()
    p_it = float(mannwhitneyu(t, in_training.double().cpu().numpy()).pvalue)
    p_oot = float(mannwhitneyu(t, out_of_training.double().cpu().numpy()).pvalue)
    a, b = (j_oot, j_it) if rule == "jsd" else (-p_oot, -p_it)  # out of training iff a < b
    tied = abs(a - b) <= _TIE_TOL  # saturated JSDs can come out as 1 and 1 − 1e-16 (float rounding in scipy)
    if tied and tie_break == "nearest-median":
        med = float(target.double().median())
        oot = abs(med - float(out_of_training.double().median())) < abs(med - float(in_training.double().median()))
    else:
        oot = a < b
    return SubsetDecision(bool(oot), j_it, j_oot, p_it, p_oot, bool(tied))


def mmd2_unbiased(x: TensorLike, y: TensorLike, kernel: Kernel = "rbf", sigma: Sigma = None) -> float:
    """Unbiased squared MMD (Gretton et al., 2012) between samples ``x [m, d]`` and ``y [n, d]`` with the same kernel
    and bandwidth (σ from the pooled sample): the distribution-distance baseline the paper compares with."""
    x, y = _as_2d(x, "X", min_rows=2), _as_2d(y, "Y", min_rows=2).to(x.device)
    if x.shape[1] != y.shape[1]:
        raise HSICInputError(f"X and Y must have the same feature dimension, got {x.shape[1]} and {y.shape[1]}")
    z = torch.cat([x, y])
    s = bandwidth(z, sigma) if kernel == "rbf" else None
    k = gram(z, kernel, s)
    m, n = x.shape[0], y.shape[0]
    kxx, kyy, kxy = k[:m, :m], k[m:, m:], k[:m, m:]
    return float(
        (kxx.sum() - kxx.diagonal().sum()) / (m * (m - 1))
        + (kyy.sum() - kyy.diagonal().sum()) / (n * (n - 1))
        - 2 * kxy.mean()
    )


def f1_score(predicted_positive: Sequence[bool], actual_positive: Sequence[bool]) -> float:
    """F1 of binary decisions (0 when nothing is predicted or actually positive)."""
    if len(predicted_positive) != len(actual_positive):
        raise HSICInputError("f1_score: predictions and labels differ in length")
    tp = sum(p and a for p, a in zip(predicted_positive, actual_positive, strict=True))
    fp = sum(p and not a for p, a in zip(predicted_positive, actual_positive, strict=True))
    fn = sum(a and not p for p, a in zip(predicted_positive, actual_positive, strict=True))
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)
