"""NC0–NC4: collapsed values on a constructed simplex ETF, clear non-collapse on random data, streaming equals
the literal computation, the documented switches, and clear errors on bad input."""

from __future__ import annotations

import math

import pytest
import torch

from iclr26_theory_metrics import neural_collapse_metrics
from iclr26_theory_metrics.ops.neural_collapse import (
    METRIC_KEYS,
    NCAccumulator,
    NCInputError,
    naive_neural_collapse_metrics,
)


def collapsed_problem(k: int = 6, p: int = 16, n: int = 7, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Features at the vertices of a rotated simplex ETF plus a global offset μ_G; W = 2·(centred means) and
    the bias b = −W μ_G that a collapsed classifier learns (needed by NC4 only)."""
    gen = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(p, p, generator=gen, dtype=torch.float64))
    etf = (torch.eye(k, dtype=torch.float64) - 1.0 / k) * math.sqrt(k / (k - 1))  # [K, K], rows centred
    means = 3.0 * etf @ q[:k]  # [K, p] rotated into R^p
    offset = torch.randn(p, generator=gen, dtype=torch.float64) * 5.0
    labels = torch.arange(k).repeat(n)
    features = means[labels] + offset
    weights = 2.0 * means
    return features, labels, weights, -weights @ offset


def test_simplex_etf_is_exactly_collapsed() -> None:
    h, y, w, b = collapsed_problem()
    m = neural_collapse_metrics(h, y, w, bias=b)
    assert set(m) == set(METRIC_KEYS) and all(isinstance(v, float) for v in m.values())
    for key in ("nc0", "nc0_norm", "nc0_squared", "alpha", "nc1", "nc2", "nc2_norm", "nc2_angle", "nc2w"):
        assert abs(m[key]) < 1e-12, (key, m[key])
    for key in ("nc2w_norm", "nc2w_angle", "nc2m", "nc3", "nc4_mismatch"):
        assert abs(m[key]) < 1e-12, (key, m[key])
    assert m["nc4"] == m["nc4_agreement"] == 1.0


def test_small_within_class_noise_gives_small_nc1() -> None:
    h, y, w, b = collapsed_problem()
    gen = torch.Generator().manual_seed(1)
    noisy = h + 1e-3 * torch.randn(h.shape, generator=gen, dtype=torch.float64)
    m = neural_collapse_metrics(noisy, y, w, bias=b)
    assert 0 < m["nc1"] < 1e-5
    assert m["nc4"] == 1.0


def test_random_features_are_clearly_not_collapsed() -> None:
    gen = torch.Generator().manual_seed(0)
    k, p, n = 6, 16, 300
    h = torch.randn(n, p, generator=gen)
    y = torch.arange(k).repeat(n // k)
    w = torch.randn(k, p, generator=gen)
    m = neural_collapse_metrics(h, y, w, scale="none")
    assert m["nc1"] > 1.0  # within-class variance dominates the between-class one
    assert m["nc0"] > 0.05
    assert m["nc2"] > 0.2 and m["nc2w"] > 0.2 and m["nc3"] > 0.5 and m["nc2m"] > 0.2
    assert m["nc2_angle"] > 0.05 and m["nc2w_angle"] > 0.05 and m["nc2w_norm"] > 0.05
    assert m["nc4"] < 0.7


@pytest.mark.parametrize("chunk", [1, 7, 64, None])
def test_streaming_equals_naive(chunk: int | None) -> None:
    gen = torch.Generator().manual_seed(3)
    k, p, n = 5, 9, 137  # imbalanced classes
    y = torch.randint(0, k, (n,), generator=gen)
    y[:k] = torch.arange(k)
    h = torch.randn(n, p, generator=gen) + 2.0 * torch.randn(k, p, generator=gen)[y]
    w = torch.randn(k, p, generator=gen)
    b = torch.randn(k, generator=gen)
    ev = torch.randn(40, p, generator=gen)
    for form in ("alignment", "self-duality"):
        fast = neural_collapse_metrics(h, y, w, bias=b, eval_features=ev, chunk_size=chunk, nc3_form=form)
        slow = naive_neural_collapse_metrics(h, y, w, bias=b, eval_features=ev, nc3_form=form)
        for key in METRIC_KEYS:
            assert fast[key] == pytest.approx(slow[key], rel=1e-9, abs=1e-12), (form, key)


def test_streaming_is_stable_under_a_huge_offset() -> None:
    """Per-class shifts avoid the cancellation of E[hhᵀ] − μμᵀ when features sit far from the origin."""
    h, y, w, _ = collapsed_problem(seed=2)
    gen = torch.Generator().manual_seed(5)
    noisy = h + 1e-4 * torch.randn(h.shape, generator=gen, dtype=torch.float64) + 1e6
    fast = neural_collapse_metrics(noisy, y, w, chunk_size=5)
    slow = naive_neural_collapse_metrics(noisy, y, w)
    assert fast["nc1"] == pytest.approx(slow["nc1"], rel=1e-6)


def test_accumulator_matches_direct_moments() -> None:
    gen = torch.Generator().manual_seed(4)
    h = torch.randn(50, 4, generator=gen, dtype=torch.float64)
    y = torch.arange(3).repeat(17)[:50]
    acc = NCAccumulator(3, 4)
    for i in range(0, 50, 8):
        acc.update(h[i : i + 8], y[i : i + 8])
    stats = acc.finalize()
    means = torch.stack([h[y == c].mean(0) for c in range(3)])
    centred = h - means[y]
    assert torch.allclose(stats.means, means, rtol=1e-12, atol=1e-12)
    assert torch.allclose(stats.within_cov, centred.T @ centred / 50, rtol=1e-12, atol=1e-12)
    assert stats.counts.tolist() == [17, 17, 16]


def test_switches() -> None:
    gen = torch.Generator().manual_seed(6)
    k, p = 4, 7
    h = torch.randn(40, p, generator=gen)
    y = torch.arange(k).repeat(10)
    w = torch.randn(k, p, generator=gen)
    paper = neural_collapse_metrics(h, y, w)
    none = neural_collapse_metrics(h, y, w, scale="none", nc0_squared=True, nc4_form="mismatch")
    row_sum = w.double().sum(0)
    assert paper["nc0"] == pytest.approx(float(row_sum.norm()) / p)
    assert none["nc0"] == pytest.approx(float(row_sum.norm()) ** 2 / p)
    assert paper["alpha"] == pytest.approx(float(row_sum.norm()) ** 2 / k)
    for key in ("nc2", "nc2w", "nc2m"):
        assert none[key] == pytest.approx(k**2 * paper[key])
    assert none["nc3"] == pytest.approx(k * p * paper["nc3"])
    assert none["nc4"] == pytest.approx(1.0 - paper["nc4"])


def test_nc3_forms() -> None:
    """NC3 as written in Appendix B (alignment of W with Mᵀ) vs the library's self-duality error
    ‖WM/‖WM‖_F − M*‖_F (= NC2M): both vanish at collapse; the self-duality error also vanishes when W = Mᵀ + 1cᵀ
    with c orthogonal to the class means, which leaves NC0 = ‖Wᵀ1‖/p > 0, so only the alignment form gives the
    paper's Proposition NC2 ∧ NC3 ⇒ NC0."""
    h, y, w, _ = collapsed_problem()
    m = neural_collapse_metrics(h, y, w)
    assert m["nc3_alignment"] < 1e-12 and m["nc3_duality"] < 1e-12
    k, p = w.shape
    centred = w / 2.0  # the centred class means [K, p] (W = 2·means in collapsed_problem)
    basis, _ = torch.linalg.qr(torch.cat([centred.T, torch.eye(p, dtype=torch.float64)], dim=1))
    c = 3.0 * basis[:, k]  # orthogonal to the span of the (K−1-dimensional) centred means
    assert float((centred @ c).abs().max()) < 1e-12
    w_off = w + c.unsqueeze(0)  # W + 1cᵀ
    a = neural_collapse_metrics(h, y, w_off, scale="none")
    d = neural_collapse_metrics(h, y, w_off, scale="none", nc3_form="self-duality")
    assert d["nc3"] == d["nc3_duality"] == d["nc2m"] and d["nc3"] < 1e-12
    assert a["nc3"] == a["nc3_alignment"] > 0.1 and a["nc0"] > 0.1
    # the library's literal formula: structure_error(M - m_G, W) = ‖WMᵀ/‖WMᵀ‖ − (I − J/K)/√(K−1)‖_F, M rows = means
    gen = torch.Generator().manual_seed(9)
    hr, wr = (
        torch.randn(60, 7, generator=gen, dtype=torch.float64),
        torch.randn(4, 7, generator=gen, dtype=torch.float64),
    )
    yr = torch.arange(4).repeat(15)
    means = torch.stack([hr[yr == j].mean(0) for j in range(4)])
    outer = wr @ (means - means.mean(0)).T
    ideal = (torch.eye(4, dtype=torch.float64) - 1.0 / 4) / math.sqrt(3)
    lib = float(torch.linalg.matrix_norm(outer / torch.linalg.matrix_norm(outer) - ideal))
    got = neural_collapse_metrics(hr, yr, wr, scale="none", nc3_form="self-duality")
    assert got["nc3"] == pytest.approx(lib, rel=1e-12)


def test_nc4_uses_bias_and_eval_features() -> None:
    h, y, w, b = collapsed_problem()
    k = w.shape[0]
    assert neural_collapse_metrics(h, y, w)["nc4"] < 1.0  # without the bias the offset μ_G misleads W h
    bias = b.clone()
    bias[0] += 1e6  # the linear classifier now always says class 0
    m = neural_collapse_metrics(h, y, w, bias=bias)
    assert m["nc4"] == pytest.approx(1.0 / k)
    m = neural_collapse_metrics(h, y, w, bias=b, eval_features=h[y == 2] + 0.01)
    assert m["nc4"] == 1.0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda h, y, w: (h, torch.zeros_like(y), w[:1]), "one class"),
        (lambda h, y, w: (h, torch.where(y == 3, 0, y), w), "class(es) [3] have no samples"),
        (lambda h, y, w: (h, torch.where(y == 3, 6, y), w), "labels must lie in [0, 6)"),
        (lambda h, y, w: (h, torch.where(y == 3, -1, y), w), "labels must lie in [0, 6)"),
        (lambda h, y, w: (h.index_fill(0, torch.tensor([2]), math.nan), y, w), "features contains NaN"),
        (lambda h, y, w: (h, y, w[:, :-1]), "weights has 15 columns"),
        (lambda h, y, w: (h, y[:-1], w), "labels must have shape [N]"),
        (lambda h, y, w: (h, y.double(), w), "integer tensor"),
        (lambda h, y, w: (h[0], y, w), "features must be 2-D"),
        (lambda h, y, w: (h.tolist(), y, w), "features must be a torch.Tensor or a NumPy array"),
        (lambda h, y, w: (h, y, w.index_fill(0, torch.tensor([0]), math.inf)), "weights contains NaN"),
        (lambda h, y, w: (h[:0], y[:0], w), "features are empty"),
    ],
)
def test_bad_inputs_raise_clear_errors(mutate, message: str) -> None:  # noqa: ANN001
    h, y, w, _ = collapsed_problem()
    args = mutate(h, y, w)
    with pytest.raises(NCInputError) as err:
        neural_collapse_metrics(*args)
    assert message in str(err.value)
    if message != "features must be a torch.Tensor or a NumPy array":
        with pytest.raises(NCInputError):
            naive_neural_collapse_metrics(*args)


def test_bad_bias_and_options() -> None:
    h, y, w, _ = collapsed_problem()
    with pytest.raises(NCInputError, match="bias must be a tensor of shape"):
        neural_collapse_metrics(h, y, w, bias=torch.zeros(3))
    with pytest.raises(NCInputError, match="scale must be"):
        neural_collapse_metrics(h, y, w, scale="bogus")  # type: ignore[arg-type]
    with pytest.raises(NCInputError, match="nc3_form must be 'alignment' or 'self-duality'"):
        neural_collapse_metrics(h, y, w, nc3_form="dual")  # type: ignore[arg-type]
    with pytest.raises(NCInputError, match="chunk_size"):
        neural_collapse_metrics(h, y, w, chunk_size=0)
    with pytest.raises(NCInputError, match="eval_features has 3 columns"):
        neural_collapse_metrics(h, y, w, eval_features=torch.zeros(2, 3))


@pytest.mark.gpu
def test_cuda_matches_cpu() -> None:
    h, y, w, _ = collapsed_problem()
    gen = torch.Generator().manual_seed(1)
    h = h + 0.1 * torch.randn(h.shape, generator=gen, dtype=torch.float64)
    cpu = neural_collapse_metrics(h, y, w)
    gpu = neural_collapse_metrics(h.cuda().float(), y.cuda(), w.cuda().float(), chunk_size=9)
    for key in METRIC_KEYS:
        assert gpu[key] == pytest.approx(cpu[key], rel=1e-4, abs=1e-6), key
