"""HSIC, its permutation test and the split-half protocol: the invariants the paper relies on, the naive twins,
an independent implementation (hyppo), the block estimator's expectation, calibration under the null, bad inputs."""

from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np
import pytest
import torch
from scipy import stats

from iclr26_theory_metrics.nn.models import MLP
from iclr26_theory_metrics.ops.hsic import (
    HSICInputError,
    classify_subset,
    f1_score,
    gram,
    hsic,
    hsic_from_grams,
    hsic_permutation_null,
    hsic_test,
    mmd2_unbiased,
    naive_hsic,
    naive_hsic_permutation_null,
    split_half_dependence,
    split_half_mean,
)


def _dependent(n: int, seed: int = 0, noise: float = 0.3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, 2, generator=g, dtype=torch.float64)
    x = torch.cat([z, torch.randn(n, 1, generator=g, dtype=torch.float64)], 1)
    y = torch.tanh(z) + noise * torch.randn(n, 2, generator=g, dtype=torch.float64)
    return x, y


def _independent(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, generator=g, dtype=torch.float64), torch.randn(n, 2, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("estimator", ["biased", "unbiased"])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_matches_naive_twin_values_and_gradients(estimator: str, kernel: str) -> None:
    x, y = _dependent(12)
    xa, xb = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    fast = hsic(xa, y, kernel, None, estimator)  # type: ignore[arg-type]
    slow = naive_hsic(xb, y, kernel, None, estimator)  # type: ignore[arg-type]
    torch.testing.assert_close(fast, slow, rtol=1e-10, atol=1e-12)
    fast.backward()
    slow.backward()
    assert xa.grad is not None and xb.grad is not None
    torch.testing.assert_close(xa.grad, xb.grad, rtol=1e-8, atol=1e-12)


def test_nonnegative_symmetric_and_permutation_invariant() -> None:
    x, y = _dependent(40)
    h = hsic(x, y)
    assert float(h) > 0
    torch.testing.assert_close(h, hsic(y, x))
    perm = torch.randperm(40, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(h, hsic(x[perm], y[perm]))  # joint row permutation
    for seed in range(5):  # the biased estimator is a squared norm: never negative
        assert float(hsic(*_independent(30, seed))) >= 0


def test_near_zero_when_independent_and_larger_with_shared_factors() -> None:
    dep = float(hsic(*_dependent(300)))
    ind = float(hsic(*_independent(300)))
    assert ind < 0.1 * dep
    assert abs(float(hsic(*_independent(300), estimator="unbiased"))) < 0.1 * dep
    weaker = float(hsic(*_dependent(300, noise=3.0)))
    assert ind < weaker < dep  # dependence grows as the shared factor dominates the noise


@pytest.mark.parametrize("bias", [True, False])
def test_normalised_statistic_matches_hyppo(bias: bool) -> None:
    with warnings.catch_warnings():  # hyppo imports a deprecated scipy.sparse path
        warnings.simplefilter("ignore", DeprecationWarning)
        from hyppo.independence import Hsic

    x, y = _dependent(60, seed=1)
    k, l = gram(x), gram(y)  # noqa: E741
    est = "biased" if bias else "unbiased"
    ours = hsic_from_grams(k, l, est) / torch.sqrt(hsic_from_grams(k, k, est) * hsic_from_grams(l, l, est))
    # hyppo's U-centring sums the whole matrix: give it the zero-diagonal Grams K̃, L̃ of Song et al.'s estimator
    kk, ll = (k, l) if bias else (k - torch.diag(k.diagonal()), l - torch.diag(l.diagonal()))
    theirs = Hsic(compute_kernel=None, bias=bias).statistic(kk.numpy(), ll.numpy())  # pyright: ignore[reportArgumentType]
    theirs = theirs**2 if bias else theirs  # hyppo reports the square root of the biased normalised statistic
    assert math.isclose(float(ours), float(theirs), rel_tol=1e-9, abs_tol=1e-12)
    torch.testing.assert_close(hsic(x, y, estimator=est), hsic_from_grams(k, l, est))  # type: ignore[arg-type]


def test_block_estimator_is_unbiased_for_the_full_u_statistic() -> None:
    # the block estimator is a mean of order-4 U-statistics on a random partition: its expectation over the
    # partition is the full unbiased HSIC
    x, y = _dependent(256, seed=2)
    full = float(hsic(x, y, estimator="unbiased"))
    g = torch.Generator().manual_seed(0)
    vals = []
    for _ in range(200):
        p = torch.randperm(256, generator=g)
        vals.append(float(hsic(x[p], y[p], estimator="block", block_size=16)))
    v = torch.tensor(vals)
    se = float(v.std()) / math.sqrt(len(vals))
    assert abs(float(v.mean()) - full) < 4 * se + 1e-12, (float(v.mean()), full, se)


def test_vectorised_null_equals_the_loop() -> None:
    x, y = _dependent(25)
    obs_a, null_a = hsic_permutation_null(x, y, 50, generator=torch.Generator().manual_seed(4))
    obs_b, null_b = naive_hsic_permutation_null(x, y, 50, generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(obs_a, obs_b)
    torch.testing.assert_close(null_a, null_b)


def test_permutation_pvalues_are_calibrated_under_the_null_and_small_under_dependence() -> None:
    g = torch.Generator().manual_seed(5)
    pvals = [hsic_test(*_independent(20, seed), 99, generator=g)[1] for seed in range(300)]
    assert stats.kstest(pvals, "uniform").pvalue > 1e-3
    assert 0.01 <= float(np.mean(np.asarray(pvals) <= 0.05)) <= 0.10
    assert hsic_test(*_dependent(60), 99, generator=g)[1] <= 0.02


def test_bad_inputs_are_named() -> None:
    x, y = _dependent(10)
    with pytest.raises(HSICInputError, match="at least 4 rows"):
        hsic(x[:3], y[:3])
    with pytest.raises(HSICInputError, match="same number of rows"):
        hsic(x, y[:9])
    bad = x.clone()
    bad[0, 0] = math.nan
    with pytest.raises(HSICInputError, match="NaN"):
        hsic(bad, y)
    with pytest.raises(HSICInputError, match=r"shape \[n, d\]"):
        hsic(x[None], y)
    with pytest.raises(HSICInputError, match="sigma"):
        hsic(x, y, sigma=-1.0)
    with pytest.raises(HSICInputError, match="subset"):
        split_half_dependence(x, torch.arange(6))
    with pytest.raises(HSICInputError, match="block_size"):
        hsic(x, y, estimator="block", block_size=32)


def test_split_half_dependence_from_features_or_model() -> None:
    torch.manual_seed(0)
    model = MLP(6, 3, width=2).double()
    xs = torch.randn(40, 6, dtype=torch.float64)
    with torch.no_grad():
        feats = model.features(xs)
    a = split_half_dependence(model, xs, 30, generator=torch.Generator().manual_seed(1))
    b = split_half_dependence(feats, None, 30, generator=torch.Generator().manual_seed(1))
    assert a.shape == (30,) and bool((a >= 0).all())
    torch.testing.assert_close(a, b)
    c = split_half_dependence(feats, torch.arange(20), 7, resplit=True, generator=torch.Generator().manual_seed(1))
    u = split_half_dependence(feats, torch.arange(20), 7, estimator="unbiased")
    assert c.shape == u.shape == (7,)


def test_decision_picks_the_reference_of_the_same_distribution() -> None:
    g = torch.Generator().manual_seed(0)
    code = torch.randn(5, 16, generator=g, dtype=torch.float64)

    def pool(noise: float, n: int = 80) -> torch.Tensor:
        return code[torch.arange(n) % 5] + noise * torch.randn(n, 16, generator=g, dtype=torch.float64)

    it, oot = split_half_dependence(pool(0.2), generator=g), split_half_dependence(pool(1.0), generator=g)
    assert not classify_subset(split_half_dependence(pool(0.2), generator=g), it, oot).out_of_training
    assert classify_subset(split_half_dependence(pool(1.0), generator=g), it, oot).out_of_training
    d = classify_subset(split_half_dependence(pool(1.0), generator=g), it, oot, rule="mann-whitney")
    assert d.out_of_training and d.mwu_p_it < d.mwu_p_oot


@pytest.mark.parametrize("rule", ["jsd", "mann-whitney"])
def test_decision_tie_break_when_no_histogram_bin_is_shared(rule: str) -> None:
    # three narrow distributions that share no bin: both JSDs are 1 and both Mann-Whitney p-values equal
    g = torch.Generator().manual_seed(0)
    it = 1.00 + 1e-3 * torch.rand(200, generator=g, dtype=torch.float64)
    oot = 1.10 + 1e-3 * torch.rand(200, generator=g, dtype=torch.float64)
    near_oot = 1.07 + 1e-3 * torch.rand(200, generator=g, dtype=torch.float64)
    near_it = 1.03 + 1e-3 * torch.rand(200, generator=g, dtype=torch.float64)
    d = classify_subset(near_oot, it, oot, rule=rule)  # type: ignore[arg-type]
    assert d.tied and d.out_of_training
    if rule == "jsd":
        assert d.jsd_it == pytest.approx(1.0) and d.jsd_oot == pytest.approx(1.0)
    assert d.tied and not classify_subset(near_it, it, oot, rule=rule).out_of_training  # type: ignore[arg-type]
    # the literal strict rule reads every tie as "in training", whatever the data
    lit = classify_subset(near_oot, it, oot, rule=rule, tie_break="in-training")  # type: ignore[arg-type]
    assert lit.tied and not lit.out_of_training
    # no tie when the histograms overlap: the rule decides, not the tie-break
    assert not classify_subset(oot[:100], it, oot).tied


def test_saturated_jsds_that_differ_by_rounding_are_a_tie(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two saturated JSDs can come out as 1 and 1 − 1.1e-16 (seen on the moment-matched null's quantiles): a tie for
    the tie-break, not an "in training" verdict of the strict rule by float rounding; a real gap is no tie."""
    from iclr26_theory_metrics.ops import hsic as mod

    g = torch.Generator().manual_seed(0)
    it = 1.00 + 1e-3 * torch.rand(50, generator=g, dtype=torch.float64)
    oot = 1.10 + 1e-3 * torch.rand(50, generator=g, dtype=torch.float64)
    near_oot = 1.07 + 1e-3 * torch.rand(50, generator=g, dtype=torch.float64)
    for j_it, tied in ((1.0 - 2.0**-53, True), (1.0 - 1e-6, False)):
        scores = iter([j_it, 1.0])  # classify_subset computes JSD(target, IT) first, then JSD(target, OOT)
        monkeypatch.setattr(mod, "jsd", lambda *a, **k: next(scores))  # noqa: B023
        d = classify_subset(near_oot, it, oot)
        assert d.tied is tied and d.out_of_training is tied  # tie: nearest median (OOT); gap: the strict rule ("in")


def test_mmd_and_f1() -> None:
    x, _ = _independent(100, 0)
    y, _ = _independent(100, 1)
    assert abs(mmd2_unbiased(x, y)) < 0.05 < mmd2_unbiased(x, y + 2.0)
    assert f1_score([True, True, False, False], [True, False, False, True]) == pytest.approx(0.5)
    assert f1_score([False, False], [True, True]) == 0.0


def _device_matches_cpu(device: str) -> None:
    """Every estimator, the permutation null and the split-half distribution on ``device`` equal the CPU values
    (the permutations come from the same CPU generator, so the draws are identical)."""
    x, y = _dependent(128)
    estimators: tuple[Literal["biased", "unbiased", "block"], ...] = ("biased", "unbiased", "block")
    for estimator in estimators:
        cpu = hsic(x, y, estimator=estimator, block_size=32)
        dev = hsic(x.to(device), y.to(device), estimator=estimator, block_size=32)
        assert dev.device.type == torch.device(device).type and dev.dtype == torch.float64
        assert float(dev) == pytest.approx(float(cpu), rel=1e-9, abs=1e-12), estimator
    obs, null = hsic_permutation_null(x, y, 50, generator=torch.Generator().manual_seed(0))
    obs_d, null_d = hsic_permutation_null(x.to(device), y.to(device), 50, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(obs_d.cpu(), obs)
    torch.testing.assert_close(null_d.cpu(), null)
    idx = torch.arange(10, 90)
    for resplit in (False, True):
        h = split_half_dependence(x, idx, 30, resplit=resplit, generator=torch.Generator().manual_seed(1))
        h_d = split_half_dependence(x.to(device), idx, 30, resplit=resplit, generator=torch.Generator().manual_seed(1))
        torch.testing.assert_close(h_d.cpu(), h)


@pytest.mark.gpu
def test_cuda_matches_cpu() -> None:
    _device_matches_cpu("cuda")


def test_split_half_mean_is_the_exact_mean_over_every_shuffle() -> None:
    """The closed form (1 − k̄)(1 − l̄)/(n − 1) (RBF; tr(HKH)(d̄_L − l̄)/(n − 1)² in general) equals the mean of
    the biased H over all n! shuffles of S₂ (n = 5: 120 permutations, enumerated), for both kernels and both σ."""
    import itertools

    g = torch.Generator().manual_seed(3)
    feats = torch.randn(11, 4, generator=g, dtype=torch.float64)
    kernels: tuple[Literal["rbf", "linear"], ...] = ("rbf", "linear")
    for kernel in kernels:
        for sigma in ("sqrt-dim", "median"):
            split = torch.rand(1, 11, generator=torch.Generator().manual_seed(9), dtype=torch.float64).argsort(-1)[0]
            s1, s2 = feats[split[:5]], feats[split[5:10]]
            exact = np.mean([float(hsic(s1, s2[list(p)], kernel, sigma)) for p in itertools.permutations(range(5))])
            closed = split_half_mean(
                feats, None, kernel=kernel, sigma=sigma, generator=torch.Generator().manual_seed(9)
            )
            assert closed == pytest.approx(exact, rel=1e-12, abs=1e-15), (kernel, sigma)
    # and it is the centre of the shuffle distribution that split_half_dependence draws from the same split
    big = torch.randn(400, 32, generator=g, dtype=torch.float64)
    h = split_half_dependence(big, None, 2000, generator=torch.Generator().manual_seed(2))
    mean = split_half_mean(big, None, generator=torch.Generator().manual_seed(2))
    assert float(h.mean()) == pytest.approx(mean, rel=4 * float(h.std()) / mean / math.sqrt(2000))


def test_median_bandwidth_never_builds_the_stacked_pairwise_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38's bug: ``resplit=True`` with ``sigma="median"`` used to take the median over the [splits·half, d]
    stack (1.6e9 distances ≈ 13 GB at the quick preset's |S| = 400 with 200 splits). At that preset size the
    largest pairwise-distance matrix built is now that of the subset's 400 distinct rows, and no intermediate
    exceeds the chunk budget."""
    from iclr26_theory_metrics.ops import hsic as mod

    largest = {"cdist": 0, "gram": 0}
    cdist, gram_fn = torch.cdist, mod.gram

    def spy_cdist(a: torch.Tensor, b: torch.Tensor, *args: object, **kw: object) -> torch.Tensor:
        largest["cdist"] = max(largest["cdist"], a.shape[-2] * b.shape[-2] * math.prod(a.shape[:-2]))
        return cdist(a, b)

    def spy_gram(x: torch.Tensor, *args: object, **kw: object) -> torch.Tensor:
        out = gram_fn(x, *args, **kw)  # pyright: ignore[reportArgumentType]
        largest["gram"] = max(largest["gram"], out.numel())
        return out

    monkeypatch.setattr(torch, "cdist", spy_cdist)
    monkeypatch.setattr(mod, "gram", spy_gram)
    feats = torch.randn(800, 512, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    idx = torch.randperm(800, generator=torch.Generator().manual_seed(1))[:400]
    h = split_half_dependence(feats, idx, 200, sigma="median", resplit=True, generator=torch.Generator().manual_seed(2))
    assert h.shape == (200,) and bool(torch.isfinite(h).all())
    assert largest["cdist"] <= 400 * 400  # the subset's own distances (per-split medians would be 200 × 200 each)
    assert largest["gram"] * 8 <= 8 * mod._GATHER_BUDGET  # pyright: ignore[reportPrivateUsage]
    # the median of a large input is read on a bounded sample
    largest["cdist"] = 0
    mod.bandwidth(torch.randn(5000, 3, dtype=torch.float64), "median")
    assert largest["cdist"] <= mod._MEDIAN_ROWS**2  # pyright: ignore[reportPrivateUsage]


def _numpy_shuffle_mean(a: torch.Tensor, b: torch.Tensor) -> float:
    """The exact mean of the biased HSIC of ``(a, b[π])`` over all n! shuffles π, in numpy (independent of
    ops.hsic): tr(HKH)(1 − l̄)/(n − 1)², RBF σ = √d (unit diagonal), l̄ the mean off-diagonal entry of b's Gram."""
    n, d = a.shape

    def rbf(v: torch.Tensor) -> np.ndarray:
        w = v.numpy()
        return np.exp(-((w[:, None, :] - w[None, :, :]) ** 2).sum(-1) / (2.0 * d))

    k, l = rbf(a), rbf(b)  # noqa: E741
    h = np.eye(n) - 1.0 / n
    return float(np.trace(h @ k @ h) * (1.0 - l[~np.eye(n, dtype=bool)].mean()) / (n - 1) ** 2)


def test_a_planted_pairwise_dependence_is_seen_by_the_permutation_test_not_by_mmd_or_the_shuffles() -> None:
    """Issue 38's control question, what a *real* dependence does. Planted: S₂'s i-th row is a noisy rotation of
    S₁'s i-th row, scaled to the same N(0, I) marginal as an independent Z. The permutation test (the observed
    pairing against the shuffles) sees it; MMD cannot (the marginals are equal); and neither can the paper's split-half
    distribution, which is the shuffles alone: their exact mean depends on the two Grams only, so it is the same for
    the planted S₂ and for Z (to 3 %), and re-pairing S₂ removes the dependence the permutation test saw. The protocol
    therefore reads a subset's spread (and MMD its marginal), never a dependence between its halves: a planted
    control that it passes is always a difference of marginals (README, "What the statistic measures")."""
    g = torch.Generator().manual_seed(11)
    n, d = 200, 8
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    rot = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))[0]
    y = (x @ rot + 0.5 * torch.randn(n, d, generator=g, dtype=torch.float64)) / math.sqrt(1.25)  # marginal N(0, I)
    z = torch.randn(n, d, generator=g, dtype=torch.float64)
    obs_y, null_y = hsic_permutation_null(x, y, 200, generator=torch.Generator().manual_seed(1))
    obs_z, null_z = hsic_permutation_null(x, z, 200, generator=torch.Generator().manual_seed(1))
    assert float(obs_y) > float(null_y.max())  # p = 1/201: the planted pairing is seen
    assert float(null_z.min()) < float(obs_z) < float(null_z.max())  # no pairing, nothing seen
    repaired = y[torch.randperm(n, generator=g)]
    obs_r, null_r = hsic_permutation_null(x, repaired, 200, generator=torch.Generator().manual_seed(1))
    assert float(null_r.min()) < float(obs_r) < float(null_r.max())  # re-paired: the dependence is gone
    # the shuffles (the protocol's H distribution) do not see the pairing: their mean is the Grams' closed form
    mean_y, mean_z = _numpy_shuffle_mean(x, y), _numpy_shuffle_mean(x, z)
    assert float(null_y.mean()) == pytest.approx(mean_y, rel=4 * float(null_y.std()) / mean_y / math.sqrt(200))
    assert mean_y == pytest.approx(mean_z, rel=0.03) and float(obs_y) > 1.5 * mean_y

    # MMD between the planted S₂ and Z is inside its own null spread; a mean shift of 0.5 per coordinate is not
    def gauss() -> torch.Tensor:
        return torch.randn(n, d, generator=g, dtype=torch.float64)

    null_mmd = [mmd2_unbiased(gauss(), gauss()) for _ in range(20)]
    spread = float(np.std(null_mmd))
    assert abs(mmd2_unbiased(y, z)) < 3 * spread < mmd2_unbiased(y, z + 0.5)
