"""EASE / EDLAE / DEQL estimators: API, solvers, the b-sweep path, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from iclr26_recsys import DEQL, EASE, EDLAE, deql_forms, deql_path
from iclr26_recsys.data import InteractionError
from iclr26_recsys.ops.closed_forms import deql_weights_rank1, ease_weights, edlae_weights


def test_public_api_and_fit(small_X):
    for model in (EASE(5.0), EDLAE(0.3, l2=2.0), DEQL(0.3, a=1.0, b=1.5, l2=2.0, zero_diag=False)):
        assert model.fit(small_X) is model
        assert model.B_.shape == (12, 12) and model.B_.dtype == np.float64
        np.testing.assert_allclose(model.predict(small_X), small_X @ model.B_)
    G = torch.from_numpy((small_X.T @ small_X).toarray())
    np.testing.assert_allclose(EASE(5.0).fit(small_X).B_, ease_weights(G, 5.0).numpy())
    np.testing.assert_allclose(EDLAE(0.3, 2.0).fit(small_X).B_, edlae_weights(G, 0.3, 2.0).numpy())
    np.testing.assert_allclose(
        DEQL(0.3, b=1.5, l2=2.0).fit(small_X.toarray()).B_,
        deql_weights_rank1(G, 0.3, 1.0, 1.5, 2.0).numpy(),
        atol=1e-10,
    )
    assert np.all(np.diag(EASE(5.0).fit(small_X).B_) == 0)
    assert "b=1.5" in repr(DEQL(0.3, b=1.5))


def test_b_is_required_and_keyword_only():
    with pytest.raises(TypeError):
        DEQL(0.3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        DEQL(0.3, 1.0, 0.5)  # type: ignore[misc]


@pytest.mark.parametrize("zero_diag", [False, True])
def test_solvers_agree(small_X, zero_diag):
    Bs = [
        DEQL(0.4, 0.8, b=1.3, l2=1.0, zero_diag=zero_diag, solver=s).fit(small_X).B_
        for s in ("structured", "rank1", "direct")
    ]
    np.testing.assert_allclose(Bs[0], Bs[2], atol=1e-10)
    np.testing.assert_allclose(Bs[1], Bs[2], atol=1e-10)


def test_float32_option(small_X):
    B32 = DEQL(0.3, b=1.2, l2=2.0, dtype="float32").fit(small_X).B_
    B64 = DEQL(0.3, b=1.2, l2=2.0).fit(small_X).B_
    assert B32.dtype == np.float32
    np.testing.assert_allclose(B32, B64, rtol=1e-3, atol=1e-4)
    assert DEQL(0.3, b=1.2, l2=2.0, dtype="float32").fit(small_X).predict(small_X).dtype == np.float32


@pytest.mark.parametrize("l2", [0.0, 3.0])
def test_deql_path_equals_individual_fits(small_X, l2):
    bs = [0.2, 0.9, 1.7]
    for model, b in zip(deql_path(small_X, 0.3, bs, l2=l2), bs, strict=True):
        np.testing.assert_allclose(model.B_, DEQL(0.3, b=b, l2=l2, solver="direct").fit(small_X).B_, atol=1e-9)


@pytest.mark.parametrize("l2", [0.0, 100.0])
def test_deql_forms_equal_individual_fits_and_their_scores(small_X, l2):
    bs = [0.2, 0.9, 1.7]
    fac, forms = deql_forms(small_X, 0.3, bs, a=1.3, l2=l2)
    users = torch.from_numpy(small_X[:7].toarray())
    UQ = fac.project(users)
    for form, b in zip(forms, bs, strict=True):
        ref = DEQL(0.3, 1.3, b=b, l2=l2, solver="direct").fit(small_X)  # one column system at a time
        np.testing.assert_allclose(fac.weights(form).numpy(), ref.B_, atol=1e-9)
        np.testing.assert_allclose(fac.scores(users, UQ, form).numpy(), ref.predict(small_X[:7]), atol=1e-9)
    with pytest.raises(ValueError, match="b"):
        deql_forms(small_X, 0.3, [0.5, -1.0], l2=l2)


def test_recommend(small_X):
    model = DEQL(0.3, b=1.0, l2=1.0).fit(small_X)
    users = small_X[:5]
    top = model.recommend(users, k=4)
    assert top.shape == (5, 4) and top.dtype == np.int64
    scores = model.predict(users)
    dense = users.toarray()
    for u in range(5):
        assert not dense[u, top[u]].any()  # seen items excluded
        s = scores[u, top[u]]
        assert np.all(np.diff(s) <= 0)  # best first
        unseen = np.flatnonzero(dense[u] == 0)
        assert s[0] == scores[u, unseen].max()
    with_seen = model.recommend(users, k=3, exclude_seen=False)
    np.testing.assert_array_equal(with_seen[:, 0], scores.argmax(1))


def test_bad_input(small_X):
    with pytest.raises(InteractionError, match="empty"):
        EASE(1.0).fit(sp.csr_matrix((0, 5)))
    with pytest.raises(InteractionError, match="empty"):
        EASE(1.0).fit(np.zeros((4, 0)))
    with pytest.raises(InteractionError, match="holds no interactions"):
        EASE(1.0).fit(np.zeros((4, 3)))
    bad = small_X.toarray()
    bad[2, 3] = np.nan
    with pytest.raises(InteractionError, match="NaN"):
        EDLAE(0.2, 1.0).fit(bad)
    bad[2, 3] = -1.0
    with pytest.raises(InteractionError, match="negative values .*row 2"):
        DEQL(0.2, b=1.0).fit(bad)
    with pytest.raises(InteractionError, match="2-D"):
        EASE(1.0).fit(np.ones(5))
    empty_col = small_X.toarray()
    empty_col[:, 4] = 0
    with pytest.raises(InteractionError, match=r"1 item column\(s\) have no interactions \(4\)"):
        DEQL(0.2, b=1.0).fit(empty_col)
    assert np.all(DEQL(0.2, b=1.0, l2=1.0).fit(empty_col).B_[:, 4] == 0)  # fine with l2 > 0
    model = EASE(1.0).fit(small_X)
    with pytest.raises(InteractionError, match="larger than the catalogue"):
        model.recommend(small_X, k=13)
    with pytest.raises(InteractionError, match="positive integer"):
        model.recommend(small_X, k=0)
    with pytest.raises(InteractionError, match="item columns"):
        model.predict(np.ones((2, 5)))
    with pytest.raises(RuntimeError, match="not fitted"):
        EASE(1.0).predict(small_X)


def test_bad_hyper_parameters():
    with pytest.raises(ValueError, match="l2 = -1"):
        EASE(-1.0)
    with pytest.raises(ValueError, match="p = 1"):
        EDLAE(1.0)
    with pytest.raises(ValueError, match="not unique"):
        DEQL(0.3, b=0.0)
    with pytest.raises(ValueError, match="zero weight"):
        DEQL(0.0, b=0.0, l2=1.0)
    with pytest.raises(ValueError, match="solver"):
        DEQL(0.3, b=1.0, solver="cg")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dtype"):
        EASE(1.0, dtype="float16")  # type: ignore[arg-type]


@pytest.mark.gpu
def test_cuda_matches_cpu(small_X):
    cpu = DEQL(0.3, b=1.2, l2=2.0).fit(small_X).B_
    gpu = DEQL(0.3, b=1.2, l2=2.0, device="cuda").fit(small_X).B_
    np.testing.assert_allclose(gpu, cpu, atol=1e-9)
