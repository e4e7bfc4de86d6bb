"""NC1–NC4 against the reference library the paper's experiments use, rhubarbwu/neural-collapse (commit c05a0b8).

Its functions are re-derived inline, line by line (in float64; the library's accumulators take ``dtype=``):
``MeanAccumulator`` + ``compute(weighted=False)`` (class means and their plain mean ``m_G``),
``CovarAccumulator`` (pooled within-class covariance over all samples), ``covariance_ratio(..., "pinv")``
(NC1), ``simplex_etf_error`` (NC2), ``mean_norms`` (its std/mean is NC2's equinorm term),
``self_duality_error`` (NC3 in the self-duality form) and ``DecAccumulator`` + ``clf_ncc_agreement``
(NC4, the weighted agreement of the linear and nearest-class-centre classifiers, no bias). NC0 (the paper's
own metric, ``‖Wᵀ1‖/p``) and NC3's alignment form have no counterpart in the library.
"""

from __future__ import annotations

from math import sqrt

import pytest
import torch

from iclr26_theory_metrics import neural_collapse_metrics


def reference_metrics(H: torch.Tensor, Y: torch.Tensor, W: torch.Tensor) -> dict[str, float]:
    K, _ = W.shape
    eps = torch.finfo(torch.float64).eps
    # MeanAccumulator.accumulate / Accumulator.compute(weighted=False)
    idxs = (Y[:, None] == torch.arange(K)).mT.to(torch.float64)  # (K, B)
    ns_samples = idxs.sum(1)
    M = (idxs @ H) / (ns_samples.unsqueeze(1) + eps)
    m_G = M.mean(dim=0)
    # CovarAccumulator.accumulate / compute
    diff = H - M[Y]
    V_intra = diff.mT @ diff / (ns_samples.sum() + eps)
    # covariance_ratio(V_intra, M, m_G, metric="pinv")
    M_centred = M - m_G
    V_inter = M_centred.mT @ M_centred / K
    nc1 = torch.trace(torch.linalg.pinv(V_inter) @ V_intra).item() / K

    def structure_error(A: torch.Tensor, B: torch.Tensor) -> float:
        struct = B @ A.mT
        struct /= torch.linalg.matrix_norm(struct)
        struct += 1 / K / sqrt(K - 1)
        struct.diagonal().sub_(1 / sqrt(K - 1))
        return torch.linalg.matrix_norm(struct).item()

    norms = M_centred.norm(dim=-1)  # mean_norms(M, m_G)
    # DecAccumulator.accumulate (manual nearest class centre) / clf_ncc_agreement(weighted=True)
    dots = torch.inner(H, M)
    dists = torch.norm(H, dim=-1).unsqueeze(1) ** 2 + torch.norm(M, dim=-1).unsqueeze(0) ** 2 - 2 * dots
    matches = ((H @ W.mT).argmax(dim=-1) == dists.argmin(dim=-1)).to(torch.int64)
    hits = torch.zeros(K, dtype=torch.int64).scatter_add_(0, Y, matches)
    avg = hits / (ns_samples + eps)
    return {
        "nc1": nc1,
        "nc2": structure_error(M_centred, M_centred),  # simplex_etf_error
        "nc2_norm": (norms.std() / norms.mean()).item(),
        "nc3": structure_error(M_centred, W),  # self_duality_error(W, M, m_G)
        "nc4": (ns_samples @ avg / (ns_samples.sum() + eps)).item(),
    }


@pytest.mark.parametrize(("spread", "p"), [(0.8, 8), (0.1, 8), (2.0, 4)])
def test_nc1_to_nc4_equal_the_reference_library(spread: float, p: int) -> None:
    g = torch.Generator().manual_seed(11)
    K = 5
    Y = torch.cat([torch.full((n,), k) for k, n in enumerate((30, 12, 25, 7, 16))])  # unbalanced classes
    centres = 4.0 * torch.randn(K, p, generator=g, dtype=torch.float64) + 10.0
    H = centres[Y] + spread * torch.randn(Y.shape[0], p, generator=g, dtype=torch.float64)
    W = centres - centres.mean(0) + 1.5 * torch.randn(K, p, generator=g, dtype=torch.float64)
    ref = reference_metrics(H, Y, W)
    ours = neural_collapse_metrics(H, Y, W, scale="none", nc3_form="self-duality")
    assert ours["nc1"] == pytest.approx(ref["nc1"], rel=1e-10)
    assert ours["nc2"] == pytest.approx(ref["nc2"], rel=1e-12)
    assert ours["nc2_norm"] == pytest.approx(ref["nc2_norm"], rel=1e-12)
    assert ours["nc3"] == ours["nc3_duality"] == pytest.approx(ref["nc3"], rel=1e-12)
    assert ours["nc4"] == ours["nc4_agreement"] == pytest.approx(ref["nc4"], abs=1e-14)
    # the fixtures are far from collapse and far from trivial, so the pins bite
    assert ref["nc1"] > 1e-4 and ref["nc2"] > 0.05 and ref["nc3"] > 0.05 and 0.3 < ref["nc4"] <= 1.0
