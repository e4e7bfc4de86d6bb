"""D_LR (Nam et al., ICLR 2026): exactly 0 at the minimum-projection ideal and exactly 1 for features
orthogonal to the learned functions, in [0, 1] otherwise; invariant to isotropic scaling, rotation and shifts
of the features and to invertible maps of the outputs; streaming = batch = the literal n × n twin; clear errors
on bad input."""

from __future__ import annotations

import math

import pytest
import torch

from iclr26_theory_metrics import richness
from iclr26_theory_metrics.ops.richness import (
    RichnessAccumulator,
    RichnessInputError,
    kernel_distance,
    naive_richness,
    parameter_norm,
    richness_spectrum,
)


def _outputs(n: int = 60, c: int = 4, seed: int = 0) -> torch.Tensor:
    return torch.randn(n, c, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _span_basis(f: torch.Tensor) -> torch.Tensor:
    """Orthonormal basis [n, r] of the centred outputs' column space."""
    u, s, _ = torch.linalg.svd(f - f.mean(0), full_matrices=False)
    return u[:, s > 1e-10 * s[0]]


def test_exactly_zero_at_the_minimum_projection_ideal() -> None:
    f = _outputs()
    q = _span_basis(f)  # [n, 4]
    gen = torch.Generator().manual_seed(1)
    rot, _ = torch.linalg.qr(torch.randn(4, 4, generator=gen, dtype=torch.float64))
    phi = 3.0 * q @ rot + 5.0  # isotropic on the span, plus a constant
    assert richness(phi, f) == pytest.approx(0.0, abs=1e-12)
    # extra feature columns that are constant change nothing
    phi_wide = torch.cat([phi, torch.full((60, 3), -2.0, dtype=torch.float64)], dim=1)
    assert richness(phi_wide, f) == pytest.approx(0.0, abs=1e-12)


def test_exactly_one_for_features_orthogonal_to_the_span() -> None:
    f = _outputs()
    q = _span_basis(f)
    gen = torch.Generator().manual_seed(2)
    raw = torch.randn(60, 10, generator=gen, dtype=torch.float64)
    raw = raw - raw.mean(0)
    phi = raw - q @ (q.T @ raw) + 7.0  # centred columns orthogonal to col(F_c), then a constant
    assert richness(phi, f) == pytest.approx(1.0, abs=1e-12)


def test_in_unit_interval_and_between_the_extremes() -> None:
    f = _outputs()
    q = _span_basis(f)
    gen = torch.Generator().manual_seed(3)
    for scale in (0.1, 1.0, 10.0):
        phi = q @ torch.randn(4, 8, generator=gen, dtype=torch.float64) + scale * torch.randn(
            60, 8, generator=gen, dtype=torch.float64
        )
        d = richness(phi, f)
        assert 0.0 < d < 1.0
    # more noise off the span -> higher D_LR
    clean = q @ torch.randn(4, 8, generator=gen, dtype=torch.float64)
    noise = torch.randn(60, 8, generator=gen, dtype=torch.float64)
    values = [richness(clean + s * noise, f) for s in (0.01, 0.3, 3.0)]
    assert values == sorted(values)


def test_invariances() -> None:
    gen = torch.Generator().manual_seed(4)
    f = _outputs(seed=5)
    phi = torch.randn(60, 6, generator=gen, dtype=torch.float64) + f @ torch.randn(
        4, 6, generator=gen, dtype=torch.float64
    )
    base = richness(phi, f)
    rot, _ = torch.linalg.qr(torch.randn(6, 6, generator=gen, dtype=torch.float64))
    mix = torch.randn(4, 4, generator=gen, dtype=torch.float64) + 3 * torch.eye(4, dtype=torch.float64)
    assert richness(17.0 * phi, f) == pytest.approx(base, rel=1e-10)
    assert richness(phi @ rot, f) == pytest.approx(base, rel=1e-10)
    assert richness(phi + 100.0, f) == pytest.approx(base, rel=1e-10)
    assert richness(phi, f @ mix - 4.0) == pytest.approx(base, rel=1e-10)
    # joint permutation of the inputs
    perm = torch.randperm(60, generator=gen)
    assert richness(phi[perm], f[perm]) == pytest.approx(base, rel=1e-10)


@pytest.mark.parametrize("chunk", [1, 7, 64, None])
def test_streaming_equals_batch_and_the_naive_twin(chunk: int | None) -> None:
    gen = torch.Generator().manual_seed(6)
    f = torch.randn(101, 3, generator=gen)  # float32 in, float64 inside
    phi = torch.randn(101, 9, generator=gen) + f @ torch.randn(3, 9, generator=gen)
    naive = naive_richness(phi, f)
    assert richness(phi, f, chunk_size=chunk) == pytest.approx(naive, rel=1e-10, abs=1e-12)
    acc = RichnessAccumulator()
    for start in range(0, 101, 10):
        acc.update(phi[start : start + 10], f[start : start + 10])
    assert acc.n == 101 and acc.value() == pytest.approx(naive, rel=1e-10, abs=1e-12)


def test_rank_deficient_outputs_and_huge_offsets() -> None:
    gen = torch.Generator().manual_seed(7)
    g = torch.randn(80, 2, generator=gen, dtype=torch.float64)
    f = torch.cat([g, g @ torch.randn(2, 3, generator=gen, dtype=torch.float64)], dim=1)  # C = 5, rank 2
    phi = torch.randn(80, 5, generator=gen, dtype=torch.float64) + g @ torch.randn(
        2, 5, generator=gen, dtype=torch.float64
    )
    assert richness(phi, f) == pytest.approx(naive_richness(phi, f), rel=1e-8)
    assert richness(phi, f) == pytest.approx(richness(phi, g), rel=1e-8)  # same span
    assert richness(phi + 1e6, f + 1e5, chunk_size=16) == pytest.approx(richness(phi, f), rel=1e-6)


def test_degenerate_data_gives_nan() -> None:
    phi = torch.randn(10, 3, dtype=torch.float64)
    assert math.isnan(richness(phi, torch.ones(10, 2)))  # constant outputs: no learned function
    assert math.isnan(richness(torch.ones(10, 3), _outputs(10, 2)))  # constant features


@pytest.mark.parametrize(
    ("features", "outputs", "message"),
    [
        (torch.zeros(1, 3), torch.zeros(1, 2), "at least n = 2"),
        (torch.zeros(5, 3), torch.zeros(5, 0), "outputs has no columns"),
        (torch.zeros(5, 0), torch.zeros(5, 2), "features has no columns"),
        (torch.zeros(5, 3), torch.zeros(4, 2), "outputs has 4 rows but features have 5"),
        (torch.full((5, 3), float("nan")), torch.zeros(5, 2), "features contains NaN"),
        (torch.zeros(5, 3), torch.tensor([[float("inf")]] * 5), "outputs contains NaN or infinite"),
        (torch.zeros(5, 3, dtype=torch.int64), torch.zeros(5, 2), "features must be floating point"),
        (torch.zeros(5), torch.zeros(5, 2), "features must be 2-D"),
        ([[0.0]], torch.zeros(1, 2), "features must be a torch.Tensor"),
    ],
)
def test_bad_inputs_raise_clear_errors(features: object, outputs: object, message: str) -> None:
    with pytest.raises(RichnessInputError, match=message):
        richness(features, outputs)  # type: ignore[arg-type]


def test_bad_options_and_streaming_shapes() -> None:
    phi, f = torch.zeros(5, 3), torch.zeros(5, 2)
    with pytest.raises(RichnessInputError, match="chunk_size must be an integer >= 1"):
        richness(phi, f, chunk_size=0)
    with pytest.raises(RichnessInputError, match="rcond must be a number in"):
        RichnessAccumulator(rcond=2.0)
    acc = RichnessAccumulator()
    acc.update(phi, f)
    with pytest.raises(RichnessInputError, match="features has 4 columns, earlier batches had 3"):
        acc.update(torch.zeros(5, 4), f)
    with pytest.raises(RichnessInputError, match="at least n = 2"):
        RichnessAccumulator().value()


def test_spectrum_equals_the_n_by_n_eigendecomposition() -> None:
    gen = torch.Generator().manual_seed(8)
    n, p = 90, 6
    phi = torch.randn(n, p, generator=gen, dtype=torch.float64) * torch.tensor([5.0, 3, 2, 1, 0.5, 0.1])
    f = phi[:, :2] @ torch.randn(2, 3, generator=gen, dtype=torch.float64) + 0.1 * torch.randn(n, 3, generator=gen)
    y = torch.nn.functional.one_hot(torch.arange(n) % 3, 3).double()
    spec = richness_spectrum(phi, f, y)
    # literal: eigenvectors of the centred n × n kernel
    h = torch.eye(n, dtype=torch.float64) - 1.0 / n
    evals, evecs = torch.linalg.eigh(h @ phi @ phi.T @ h)
    evals, evecs = evals.flip(0)[:p], evecs.flip(1)[:, :p]
    fc, yc = h @ f, h @ y
    util = (evecs.T @ fc).square().sum(1).cumsum(0) / fc.square().sum()
    qual = (evecs.T @ yc).square().sum(1).cumsum(0) / yc.square().sum()
    assert spec["relative_eigenvalues"] == pytest.approx((evals / evals[0]).tolist(), rel=1e-9)
    assert spec["utilisation"] == pytest.approx(util.tolist(), rel=1e-9)
    assert spec["quality"] == pytest.approx(qual.tolist(), rel=1e-9, abs=1e-12)
    assert spec["relative_eigenvalues"][0] == 1.0 and spec["utilisation"] == sorted(spec["utilisation"])
    # outputs that are linear in the features are fully used by the kernel's eigenfunctions
    assert richness_spectrum(phi, phi @ torch.randn(p, 2, generator=gen, dtype=torch.float64))["utilisation"][
        -1
    ] == pytest.approx(1.0)
    assert richness_spectrum(torch.ones(5, 2), torch.randn(5, 2)) == {"relative_eigenvalues": [], "utilisation": []}


def test_spectrum_plot(tmp_path) -> None:  # noqa: ANN001
    from iclr26_theory_metrics.plotting import plot_richness_spectrum

    gen = torch.Generator().manual_seed(9)
    phi = torch.randn(40, 5, generator=gen, dtype=torch.float64)
    spec = richness_spectrum(phi, phi[:, :2], torch.nn.functional.one_hot(torch.arange(40) % 2, 2).double())
    out = plot_richness_spectrum(tmp_path / "spectrum.png", spec, title="test")
    assert out.stat().st_size > 1000


def test_baselines_kernel_distance_and_parameter_norm() -> None:
    gen = torch.Generator().manual_seed(10)
    a = torch.randn(50, 4, generator=gen, dtype=torch.float64)
    rot, _ = torch.linalg.qr(torch.randn(4, 4, generator=gen, dtype=torch.float64))
    assert kernel_distance(a, 3.0 * a @ rot) == pytest.approx(0.0, abs=1e-12)  # same kernel up to scale
    b = torch.randn(50, 4, generator=gen, dtype=torch.float64)
    ka, kb = a @ a.T, b @ b.T
    literal = 1.0 - float((ka * kb).sum()) / float(ka.norm() * kb.norm())
    assert kernel_distance(a, b) == pytest.approx(literal, rel=1e-12) and 0.0 < literal < 1.0
    assert math.isnan(kernel_distance(a, torch.zeros(50, 3)))
    with pytest.raises(RichnessInputError, match="features_b has 49 rows"):
        kernel_distance(a, b[:49])
    layer = torch.nn.Linear(3, 2)
    with torch.no_grad():
        layer.weight.fill_(2.0)
        layer.bias.fill_(-1.0)
    assert parameter_norm(layer) == pytest.approx(6 * 4.0 + 2 * 1.0)


def _numpy_d_lr(phi: torch.Tensor, f: torch.Tensor, *, centred_span: bool, a1: float, a2: float) -> float:
    """An independent D_LR: linear CKA (Kornblith et al., 2019: HSIC(K, L) / √(HSIC(K, K) HSIC(L, L)) with
    HSIC(K, L) = tr(KHLH)) between T = ΦΦᵀ and T_MP = a₁11ᵀ + a₂P, P the orthogonal projection (numpy lstsq /
    pinv, no SVD basis) onto the span of the outputs F (``centred_span=False``: the literal definition) or of the
    centred outputs HF (the notes' estimator)."""
    import numpy as np

    x, y = phi.numpy(), f.numpy()
    n = x.shape[0]
    h = np.eye(n) - 1.0 / n
    span = h @ y if centred_span else y
    proj = span @ np.linalg.pinv(span)
    k, t_mp = x @ x.T, a1 * np.ones((n, n)) + a2 * proj

    def hsic(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.trace(a @ h @ b @ h))

    return 1.0 - hsic(k, t_mp) / math.sqrt(hsic(k, k) * hsic(t_mp, t_mp))


@pytest.mark.parametrize("centre", [True, False])
def test_both_readings_of_the_span_match_an_independent_cka(centre: bool) -> None:
    """Biased outputs (the constant is not in their span): the two readings differ, and each equals the
    independent numpy CKA with T_MP's own a₁, a₂ (which centring makes irrelevant), streamed or not."""
    g = torch.Generator().manual_seed(5)
    phi = torch.randn(150, 12, generator=g, dtype=torch.float64)
    f = phi[:, :3] @ torch.randn(3, 4, generator=g, dtype=torch.float64) + torch.randn(150, 4, generator=g).double()
    f = f + torch.tensor([2.0, -1.0, 0.5, 3.0], dtype=torch.float64)  # biased logits
    expected = _numpy_d_lr(phi, f, centred_span=centre, a1=0.7, a2=1.3)
    assert expected == pytest.approx(_numpy_d_lr(phi, f, centred_span=centre, a1=5.0, a2=0.2), rel=1e-10)
    assert richness(phi, f, centre_outputs=centre) == pytest.approx(expected, rel=1e-9)
    assert richness(phi + 50.0, f, centre_outputs=centre, chunk_size=17) == pytest.approx(expected, rel=1e-7)
    assert naive_richness(phi, f, centre_outputs=centre) == pytest.approx(expected, rel=1e-9)
    other = _numpy_d_lr(phi, f, centred_span=not centre, a1=1.0, a2=1.0)
    assert abs(other - expected) > 1e-3  # the switch matters on biased outputs


def test_the_readings_agree_when_the_constant_is_in_the_span() -> None:
    """A least-squares read-out with an intercept of one-hot labels has rows summing to 1, so the constant lies in
    the outputs' span (centred rank C − 1) and both readings give the same D_LR."""
    g = torch.Generator().manual_seed(6)
    y = torch.arange(200) % 5
    phi = torch.randn(200, 20, generator=g, dtype=torch.float64)
    design = torch.cat([phi, torch.ones(200, 1, dtype=torch.float64)], 1)
    out = design @ torch.linalg.lstsq(design, torch.nn.functional.one_hot(y, 5).double()).solution
    assert torch.linalg.matrix_rank(out - out.mean(0)) == 4
    assert richness(phi, out, centre_outputs=False) == pytest.approx(richness(phi, out), rel=1e-9)


def test_zero_without_classes() -> None:
    """D_LR = 0 does not imply neural collapse: continuous outputs with no classes whose span the features equal
    give 0 too."""
    g = torch.Generator().manual_seed(7)
    f = torch.randn(100, 3, generator=g, dtype=torch.float64)  # a regression output, no classes
    rot = torch.linalg.qr(torch.randn(3, 3, generator=g, dtype=torch.float64))[0]
    phi = 3.0 * _span_basis(f) @ rot  # isotropic on the outputs' span
    assert richness(phi, f) == pytest.approx(0.0, abs=1e-12)


def test_random_feature_levels_of_the_quick_grokking_shape() -> None:
    """The room D_LR has in the quick grokking preset (P = 23 outputs, p = 32): isotropic random features score
    1 − √(r/p) with r the centred rank of the outputs. A least-squares read-out with an intercept of one-hot targets
    has rows summing to 1, so r = P − 1 (0.171, the ``random_level`` the run logs); an unconstrained linear head, as
    cross-entropy logits are (a constant added to a row changes no probability), has r = min(P, p) = P (0.152)."""
    g = torch.Generator().manual_seed(8)
    n, p, c = 6000, 32, 23
    phi = torch.randn(n, p, generator=g, dtype=torch.float64)
    onehot = torch.nn.functional.one_hot(torch.randint(0, c, (n,), generator=g), c).double()
    design = torch.cat([phi, torch.ones(n, 1, dtype=torch.float64)], 1)
    readout = design @ torch.linalg.lstsq(design, onehot).solution
    head = phi @ torch.randn(p, c, generator=g, dtype=torch.float64) + torch.randn(c, generator=g, dtype=torch.float64)
    assert richness(phi, readout) == pytest.approx(1 - math.sqrt((c - 1) / p), abs=0.01)
    assert richness(phi, head) == pytest.approx(1 - math.sqrt(c / p), abs=0.01)
