"""ELViS library: log-domain Sinkhorn (vs a probability-domain twin, marginals), dustbins, votes, Chamfer,
padding masks, permutation invariance, gradients, bad inputs; the transformer re-ranker's masks."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from iclr26_generative_vision.retrieval.elvis import (
    ELViS,
    chamfer_ot_similarity,
    chamfer_similarity,
    log_sinkhorn,
    naive_log_sinkhorn,
    ot_similarity,
    rerank_score,
    votes,
)
from iclr26_generative_vision.retrieval.rrt import RerankingTransformer
from iclr26_shared.errors import DataError


def _pairs(b: int = 3, m: int = 6, n: int = 9, d: int = 16, seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    q = F.normalize(torch.randn(b, m, d, generator=gen), dim=-1)
    x = F.normalize(torch.randn(b, n, d, generator=gen), dim=-1)
    return q, torch.ones(b, m, dtype=torch.bool), x, torch.ones(b, n, dtype=torch.bool)


def _augmented(sim: torch.Tensor, u: torch.Tensor, v: torch.Tensor, omega: float) -> torch.Tensor:
    m, n = sim.shape
    aug = torch.empty(m + 1, n + 1, dtype=sim.dtype)
    aug[:m, :n], aug[:m, n], aug[m, :n], aug[m, n] = sim, u, v, omega
    return aug


def test_log_sinkhorn_matches_the_probability_domain_twin_and_its_marginals() -> None:
    gen = torch.Generator().manual_seed(1)
    m, n = 5, 7
    sim = torch.rand(m, n, generator=gen, dtype=torch.float64) * 2 - 1
    u, v = torch.rand(m, generator=gen, dtype=torch.float64), torch.rand(n, generator=gen, dtype=torch.float64)
    aug = _augmented(sim, u, v, 1.0)
    a = torch.cat([torch.full((m,), 1 / (m + n)), torch.tensor([n / (m + n)])]).double()
    b = torch.cat([torch.full((n,), 1 / (m + n)), torch.tensor([m / (m + n)])]).double()
    log_p = log_sinkhorn(aug[None], a.log()[None], b.log()[None], iters=10, reg=0.1)[0]
    torch.testing.assert_close(log_p, naive_log_sinkhorn(aug, a, b, iters=10, reg=0.1))
    # after the last (column) update the column marginals are exact; run long enough for the rows too
    p = log_sinkhorn(aug[None], a.log()[None], b.log()[None], iters=500, reg=0.1)[0].exp()
    torch.testing.assert_close(p.sum(0), b)
    torch.testing.assert_close(p.sum(1), a, atol=1e-6, rtol=1e-6)
    # the transported similarity is (M+N)·P without the dustbins
    sp = ot_similarity(
        sim[None],
        torch.ones(1, m, dtype=torch.bool),
        torch.ones(1, n, dtype=torch.bool),
        dustbin="learned",
        u=u[None],
        v=v[None],
        omega=1.0,
        iters=10,
        reg=0.1,
    )[0]
    torch.testing.assert_close(sp, (m + n) * log_p.exp()[:m, :n])


@pytest.mark.parametrize("dustbin", ["learned", "scalar", "none"])
def test_dustbin_variants_shapes_and_padding_masks(dustbin: str) -> None:
    torch.manual_seed(0)
    model = ELViS(16, dim=8, dustbin=dustbin).double()  # pyright: ignore[reportArgumentType]
    q, qm, x, xm = (t.double() if t.is_floating_point() else t for t in _pairs())
    sp = model.transported(q, qm, x, xm)
    assert sp.shape == (3, 6, 9) and bool((sp >= 0).all())
    s = model(q, qm, x, xm)
    assert s.shape == (3,) and model.logit(q, qm, x, xm).shape == (3,)
    # padding: extra masked descriptors (any values) change nothing
    pad_q = torch.cat([q, 5 * torch.ones(3, 4, 16, dtype=q.dtype)], 1)
    pad_x = torch.cat([x, -3 * torch.ones(3, 2, 16, dtype=x.dtype)], 1)
    pad_qm = torch.cat([qm, torch.zeros(3, 4, dtype=torch.bool)], 1)
    pad_xm = torch.cat([xm, torch.zeros(3, 2, dtype=torch.bool)], 1)
    sp_pad = model.transported(pad_q, pad_qm, pad_x, pad_xm).detach()
    torch.testing.assert_close(sp_pad[:, :6, :9], sp)
    assert float(sp_pad[:, 6:].abs().sum() + sp_pad[:, :, 9:].abs().sum()) == 0.0
    torch.testing.assert_close(model(pad_q, pad_qm, pad_x, pad_xm), s)


def test_batched_pairs_of_different_sizes_equal_one_pair_at_a_time() -> None:
    torch.manual_seed(0)
    model = ELViS(16, dim=8).double()
    q, qm, x, xm = (t.double() if t.is_floating_point() else t for t in _pairs())
    qm[0, 4:], xm[1, 3:], xm[2, 8:] = False, False, False
    batched = model(q, qm, x, xm)
    for i in range(3):
        one = model(q[i : i + 1, qm[i]], qm[i : i + 1, qm[i]], x[i : i + 1, xm[i]], xm[i : i + 1, xm[i]])
        torch.testing.assert_close(batched[i : i + 1], one)


def test_permutation_invariance_over_descriptors() -> None:
    torch.manual_seed(0)
    model = ELViS(16, dim=8).double()
    q, qm, x, xm = (t.double() if t.is_floating_point() else t for t in _pairs())
    s = model(q, qm, x, xm)
    pq, px = torch.randperm(6), torch.randperm(9)
    torch.testing.assert_close(model(q[:, pq], qm, x[:, px], xm), s)
    sp = model.transported(q, qm, x, xm)
    torch.testing.assert_close(model.transported(q[:, pq], qm, x[:, px], xm), sp[:, pq][:, :, px])


def test_votes_without_f_sum_to_chamfer() -> None:
    q, qm, x, xm = _pairs()
    sim = torch.einsum("bmd,bnd->bmn", q, x)
    rows, cols = votes(sim, qm, xm)
    naive = torch.stack([sim[i].max(1).values.sum() + sim[i].max(0).values.sum() for i in range(3)])
    torch.testing.assert_close(chamfer_similarity(q, qm, x, xm), naive)
    torch.testing.assert_close(rows.sum(1) + cols.sum(1), naive)
    # f = identity (votes summed as they are): ELViS's score is the Chamfer similarity of S'; without the
    # projection and with ELViS's initial scalar dustbin ω = 1 it is exactly the zero-parameter Chamfer+OT
    model = ELViS(16, dim=16, use_f=False, project=False, dustbin="scalar")
    r, c = votes(model.transported(q, qm, x, xm), qm, xm)
    torch.testing.assert_close(model(q, qm, x, xm), r.sum(1) + c.sum(1))
    torch.testing.assert_close(model(q, qm, x, xm), chamfer_ot_similarity(q, qm, x, xm, dustbin_score=1.0))


def test_chamfer_ot_prefers_the_matching_image() -> None:
    q, qm, x, xm = _pairs(b=1, m=20, n=20, d=32)
    noisy = F.normalize(q + 0.05 * torch.randn_like(q), dim=-1)[:, torch.randperm(20)]
    same = chamfer_ot_similarity(q, qm, noisy, qm)
    other = chamfer_ot_similarity(q, qm, x, xm)
    assert float(same.detach()) > 2 * float(other.detach())


def test_gradients_reach_projection_dustbins_omega_f_and_g() -> None:
    torch.manual_seed(0)
    model = ELViS(16, dim=8)
    q, qm, x, xm = _pairs()
    model.logit(q, qm, x, xm).sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name
    frozen = ELViS(16, dim=8, dustbin="scalar")
    assert not any(p.requires_grad for p in frozen.h.parameters())
    assert frozen.num_inference_parameters() < model.num_inference_parameters()


def test_parameter_count_matches_the_paper_at_dinov2_width() -> None:
    # paper: about 96K learnable parameters with 768-d DINOv2 descriptors (projection, h, ω, f; g is training-only)
    n = ELViS(768).num_inference_parameters()
    assert 95_000 < n < 118_000, n


def test_rerank_score_is_the_papers_convex_combination() -> None:
    g, s = torch.tensor([0.2, 0.8]), torch.tensor([0.0, 4.0])
    torch.testing.assert_close(rerank_score(g, s), 0.5 * g + 0.5 * torch.sigmoid(0.5 * s))


def test_bad_inputs_raise_one_clear_error() -> None:
    model = ELViS(16, dim=8)
    q, qm, x, xm = _pairs()
    with pytest.raises(DataError, match="at least one local descriptor"):
        model(q, torch.zeros_like(qm), x, xm)
    with pytest.raises(DataError, match="at least one local descriptor"):
        model(q[:, :0], qm[:, :0], x, xm)
    with pytest.raises(DataError, match="disagree"):
        model(q, qm, x[..., :8], xm)
    with pytest.raises(DataError, match="expects 16"):
        model(q[..., :8], qm, x[..., :8], xm)
    with pytest.raises(DataError, match="masks"):
        chamfer_similarity(q, qm[:, :3], x, xm)


def test_transformer_reranker_ignores_padding_and_counts_parameters() -> None:
    torch.manual_seed(0)
    rrt = RerankingTransformer(16, dim=16, layers=1, heads=2, ffn=32).eval()
    q, qm, x, xm = _pairs()
    logit = rrt(q, qm, x, xm, q[:, 0], x[:, 0])
    pad_q = torch.cat([q, torch.randn(3, 3, 16)], 1)
    pad_qm = torch.cat([qm, torch.zeros(3, 3, dtype=torch.bool)], 1)
    torch.testing.assert_close(rrt(pad_q, pad_qm, x, xm, q[:, 0], x[:, 0]), logit, atol=1e-5, rtol=1e-5)
    assert logit.shape == (3,) and rrt.num_inference_parameters() > ELViS(16, dim=8).num_inference_parameters()


def test_official_weights_load_from_a_local_file_with_the_renames(tmp_path) -> None:  # noqa: ANN001
    """A checkpoint in the official layout (``{"state": ...}``, pavelsuma/ELViS names, D = 768) loads into our
    module and gives the same similarities as the module whose weights it holds; bad files: one line."""
    import pytest

    from iclr26_generative_vision.retrieval.elvis import ELViS, load_official_elvis
    from iclr26_shared.errors import DataError

    torch.manual_seed(0)
    ours = ELViS(768).eval()
    with torch.no_grad():
        for p in ours.parameters():
            p.add_(0.05 * torch.randn(p.shape))
    inverse = {"proj.": "remap_local.", "h.": "dust_bin_mlp.", "omega": "dust_bin"}
    official = {}
    for key, value in ours.state_dict().items():
        prefix = next((k for k in inverse if key.startswith(k)), None)
        official[inverse[prefix] + key[len(prefix) :] if prefix else key] = value.clone()
    assert {"remap_local.0.weight", "remap_local.1.bias", "dust_bin_mlp.2.weight", "dust_bin", "f.1.weight"} <= set(
        official
    )
    torch.save({"state": official, "epoch": 3}, tmp_path / "dinov2_elvis_gld.pt")
    loaded = load_official_elvis(tmp_path / "dinov2_elvis_gld.pt")
    q, x = (
        torch.nn.functional.normalize(torch.randn(2, 9, 768), dim=-1),
        torch.nn.functional.normalize(torch.randn(2, 7, 768), dim=-1),
    )
    qm, xm = torch.ones(2, 9, dtype=torch.bool), torch.ones(2, 7, dtype=torch.bool)
    with torch.no_grad():
        assert torch.equal(loaded(q, qm, x, xm), ours(q, qm, x, xm))
    with pytest.raises(DataError, match="weights file not found"):
        load_official_elvis(tmp_path / "absent.pt")
    torch.save({"state": {"w": torch.zeros(1)}}, tmp_path / "other.pt")
    with pytest.raises(DataError, match="not an official ELViS checkpoint"):
        load_official_elvis(tmp_path / "other.pt")


def _official_forward(state: dict[str, torch.Tensor], q: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The official ``Elvis.forward`` in eval mode for one unpadded pair, re-derived in float64 from its
    formulas (pavelsuma/ELViS ``elvis/models/elvis.py``, ``binarized=False``): projection + LayerNorm (eps
    1e-5), ℓ2; dustbins ``tanh(MLP)``; OpenGlue log-Sinkhorn on ``[[S, u], [vᵀ, ω]] / 0.1`` with weights
    ``1/(M+N)`` and dustbin masses ``N/(M+N)``, ``M/(M+N)``, 10 iterations from zero; ``S' = (M+N)·P``;
    row and column maxima through ``f`` (its LayerNorm eps 1e-6), sigmoid, summed."""
    w = {k: v.double() for k, v in state.items()}

    def layer_norm(z: torch.Tensor, prefix: str, eps: float) -> torch.Tensor:
        mu = z.mean(-1, keepdim=True)
        var = ((z - mu) ** 2).mean(-1, keepdim=True)
        return (z - mu) / torch.sqrt(var + eps) * w[prefix + ".weight"] + w[prefix + ".bias"]

    def gelu(z: torch.Tensor) -> torch.Tensor:
        return 0.5 * z * (1 + torch.erf(z / 2**0.5))

    def lin(z: torch.Tensor, prefix: str) -> torch.Tensor:
        return z @ w[prefix + ".weight"].T + w[prefix + ".bias"]

    def embed(d: torch.Tensor) -> torch.Tensor:
        p = layer_norm(lin(d.double(), "remap_local.0"), "remap_local.1", 1e-5)
        return p / p.norm(dim=-1, keepdim=True)

    pq, px = embed(q), embed(x)
    m, n = pq.shape[0], px.shape[0]
    dust_q = torch.tanh(lin(gelu(lin(pq, "dust_bin_mlp.0")), "dust_bin_mlp.2")).squeeze(-1)
    dust_x = torch.tanh(lin(gelu(lin(px, "dust_bin_mlp.0")), "dust_bin_mlp.2")).squeeze(-1)
    aug = torch.zeros(m + 1, n + 1, dtype=torch.float64)
    aug[:m, :n], aug[:m, n], aug[m, :n], aug[m, n] = pq @ px.T, dust_q, dust_x, w["dust_bin"]
    z = aug / 0.1
    norm = -torch.log(torch.tensor(float(m + n), dtype=torch.float64))
    log_a, log_b = norm.repeat(m + 1), norm.repeat(n + 1)
    log_a[-1] += torch.log(torch.tensor(float(n), dtype=torch.float64))
    log_b[-1] += torch.log(torch.tensor(float(m), dtype=torch.float64))
    u, v = torch.zeros(m + 1, dtype=torch.float64), torch.zeros(n + 1, dtype=torch.float64)
    for _ in range(10):
        u = log_a - torch.logsumexp(z + v[None, :], dim=1)
        v = log_b - torch.logsumexp(z + u[:, None], dim=0)
    s_prime = torch.exp(z + u[:, None] + v[None, :] - norm)[:m, :n]
    votes_ = torch.cat([s_prime.amax(1), s_prime.amax(0)])[:, None]
    f = lin(gelu(layer_norm(lin(votes_, "f.0"), "f.1", 1e-6)), "f.3")
    return torch.sigmoid(f).sum()


def test_official_checkpoint_scores_equal_an_independent_derivation_of_the_official_forward(tmp_path) -> None:  # noqa: ANN001
    """An official-layout checkpoint built from raw tensors (the official names and shapes, D = 768, d = 128)
    loaded through ``load_official_elvis`` scores pairs as the official forward re-derived in float64.
    Run beside the official module itself (``scripts/compare_official_elvis.py``), the largest relative
    difference was 1.1e-7 (README); with f's LayerNorm at PyTorch's default eps 1e-5 it was 3.7e-4."""
    from iclr26_generative_vision.retrieval.elvis import load_official_elvis

    g = torch.Generator().manual_seed(3)

    def r(*shape: int, scale: float = 0.05) -> torch.Tensor:
        return torch.randn(*shape, generator=g) * scale

    state = {
        "remap_local.0.weight": r(128, 768), "remap_local.0.bias": r(128),
        "remap_local.1.weight": 1 + r(128), "remap_local.1.bias": r(128),
        "dust_bin_mlp.0.weight": r(128, 128, scale=0.2), "dust_bin_mlp.0.bias": r(128),
        "dust_bin_mlp.2.weight": r(1, 128, scale=0.2), "dust_bin_mlp.2.bias": r(1),
        "f.0.weight": r(16, 1), "f.0.bias": r(16, scale=0.01),
        "f.1.weight": 1 + r(16), "f.1.bias": r(16),
        "f.3.weight": r(1, 16, scale=0.5), "f.3.bias": r(1),
        "g.0.weight": r(64, 1), "g.0.bias": r(64), "g.2.weight": r(1, 64), "g.2.bias": r(1),
        "dust_bin": torch.tensor(0.8),
    }  # fmt: skip
    torch.save({"state": state}, tmp_path / "dinov2_elvis_gld.pt")
    model = load_official_elvis(tmp_path / "dinov2_elvis_gld.pt").eval()
    assert (model.in_dim, model.dim) == (768, 128)
    for m, n in [(6, 9), (40, 31)]:
        q = F.normalize(torch.randn(m, 768, generator=g), dim=-1)
        x = F.normalize(torch.randn(n, 768, generator=g), dim=-1)
        x[: min(m, n) // 2] = q[: min(m, n) // 2]  # shared descriptors: a few large votes
        with torch.no_grad():
            ours = model(q[None], torch.ones(1, m, dtype=torch.bool), x[None], torch.ones(1, n, dtype=torch.bool))
        torch.testing.assert_close(ours[0].double(), _official_forward(state, q, x), rtol=2e-6, atol=0.0)
