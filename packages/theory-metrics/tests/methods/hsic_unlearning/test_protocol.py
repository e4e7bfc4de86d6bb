"""Common random numbers and the public ``evaluate_unlearning``: the same draws for every model whatever the order
of the calls, identical verdicts for two models with the same features (MIA-fool's situation), tensors and
DataLoaders giving the same answer, and the MC interval of the draws."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from iclr26_shared.errors import UsageError
from iclr26_shared.verdicts import t_interval
from iclr26_theory_metrics import compare_unlearning, evaluate_unlearning
from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS
from iclr26_theory_metrics.methods.hsic_unlearning.protocol import Protocol, otr_study


def _feats(n: int, seed: int) -> torch.Tensor:
    return torch.randn(n, 8, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_draws_are_keyed_not_ordered() -> None:
    """The same key gives the same split and shuffles whatever was drawn before (one generator advancing across
    models used to give each model different draws)."""
    proto = Protocol(dataclasses.replace(PRESETS["smoke"], n_shuffles=30), seed=3)
    f, idx = _feats(100, 0), torch.arange(40)
    a = proto.dependence(f, idx, (1, 0, 2, 5))
    proto.dependence(f, torch.arange(50, 90), (9, 9))  # an unrelated draw in between
    b = proto.dependence(f, idx, (1, 0, 2, 5))
    assert torch.equal(a, b)
    assert not torch.equal(a, proto.dependence(f, idx, (1, 0, 2, 6)))  # another key, other shuffles


def test_models_with_the_same_features_get_identical_verdicts() -> None:
    """MIA-fool trains only the head, so its features are the original's: with common random numbers every draw of
    its OTR equals the original's (the README's old 0.55/0.75/0.55 vs 0.50/0.50/0.40 came from unpaired draws)."""
    cfg = dataclasses.replace(PRESETS["smoke"], subset_size=16, n_targets=4, protocol_draws=3, n_shuffles=30)
    forget, retain, ref = _feats(60, 1), _feats(80, 2), _feats(60, 3)
    a = otr_study(Protocol(cfg, 7), forget, retain, ref)
    b = otr_study(Protocol(cfg, 7), forget.clone(), retain.clone(), ref.clone())
    assert a == b and len(a["otr_draws"]) == 3
    mean = sum(a["otr_draws"]) / 3
    lo, hi = t_interval(a["otr_draws"])
    assert a["otr"] == pytest.approx(mean) and a["otr_ci"] == [max(lo, 0.0), min(hi, 1.0)]


def test_evaluate_unlearning_on_a_plain_sequential_with_dataloaders() -> None:
    """Any nn.Module or callable (no ``.features`` needed), tensors or DataLoaders of ``(x, y)`` batches: the same
    answer; a bad option or too few samples is a one-line usage error."""
    torch.manual_seed(0)
    body = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 8), torch.nn.ReLU())
    x = torch.randn(200, 1, 4, 4)
    kw: dict[str, Any] = {"subset_size": 16, "n_targets": 3, "protocol_draws": 2, "n_shuffles": 20}
    as_tensors = evaluate_unlearning(body, x[:50], x[50:130], x[130:], **kw)
    as_loaders = evaluate_unlearning(
        lambda t: body(t),
        *(DataLoader(TensorDataset(t, torch.zeros(len(t))), batch_size=7) for t in (x[:50], x[50:130], x[130:])),
        **kw,
    )
    # float32 forward passes in batches of 7 differ in the last bits: the decisions agree, the levels to 1e-6
    assert as_tensors["otr_draws"] == as_loaders["otr_draws"] and 0.0 <= as_tensors["otr"] <= 1.0
    assert as_tensors["mean_h_forget"] == pytest.approx(as_loaders["mean_h_forget"], rel=1e-6)
    assert body.training  # the module's mode is restored
    with pytest.raises(UsageError, match="unknown protocol option"):
        evaluate_unlearning(body, x[:50], x[50:130], x[130:], bins=3, **kw)
    with pytest.raises(UsageError, match="forget"):
        evaluate_unlearning(body, x[:10], x[50:130], x[130:], **kw)


def test_otr_validity_and_the_tie_break() -> None:
    """Forget subsets whose H lies nearer the in-training reference's must read "in training" (OTR 0), those nearer
    the unseen reference's "out" (OTR 1) (pools that differ in spread: noise 0.25 / 0.5 / 1.1 / 1.5 around class
    codes). Where a target's histogram shares no bin with either reference both JSDs are 1 (a tie): the literal
    strict rule (``tie_break="in-training"``) calls every tie "in", so its OTR of the "out" targets is exactly
    1 − tie_share (the cause of issue 38's failed validity check; the tie itself is pinned in test_hsic.py)."""
    code = torch.randn(10, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)

    def planted(noise: float, seed: int, n: int = 300) -> torch.Tensor:
        g = torch.Generator().manual_seed(seed)
        return code[torch.arange(n) % 10] + noise * torch.randn(n, 16, generator=g, dtype=torch.float64)

    cfg = dataclasses.replace(PRESETS["smoke"], subset_size=120, n_targets=4, protocol_draws=2, n_shuffles=30)
    retain, ref = planted(0.25, 1), planted(1.5, 2)
    near_in, near_out = planted(0.5, 3), planted(1.1, 4)
    seen = otr_study(Protocol(cfg, 0), near_in, retain, ref)
    unseen = otr_study(Protocol(cfg, 0), near_out, retain, ref)
    assert seen["otr"] == 0.0 and unseen["otr"] == 1.0
    assert 0.0 <= seen["tie_share"] <= 1.0 and 0.0 <= unseen["tie_share"] <= 1.0
    literal = dataclasses.replace(cfg, tie_break="in-training")
    assert otr_study(Protocol(literal, 0), near_out, retain, ref)["otr"] == pytest.approx(1.0 - unseen["tie_share"])
    assert otr_study(Protocol(literal, 0), near_in, retain, ref)["otr"] == 0.0
    # the moment-matched Gamma null in place of the shuffles gives the same verdicts on these pools
    gamma = dataclasses.replace(cfg, null="gamma", f1_subset_sizes=(120,))
    assert otr_study(Protocol(gamma, 0), near_in, retain, ref)["otr"] == 0.0
    assert otr_study(Protocol(gamma, 0), near_out, retain, ref)["otr"] == 1.0


def test_gamma_null_is_the_keyed_splits_moment_matched_quantiles() -> None:
    """``null="gamma"``: each subset's distribution is :func:`split_half_gamma` of the same keyed split the shuffles
    would use (so still common random numbers), with the shuffles' exact mean; no shuffles are drawn."""
    from iclr26_theory_metrics.ops.hsic import split_half_mean
    from iclr26_theory_metrics.ops.hsic_null import split_half_gamma

    cfg = dataclasses.replace(PRESETS["smoke"], null="gamma", subset_size=40, f1_subset_sizes=(40,), n_shuffles=50)
    proto = Protocol(cfg, seed=2)
    f, idx = _feats(120, 5), torch.arange(20, 60)
    h = proto.dependence(f, idx, (1, 0, 2, 3))
    assert torch.equal(h, split_half_gamma(f, idx, 50, generator=proto.generator(1, 0, 2, 3)))
    assert torch.equal(h, proto.dependence(f, idx, (1, 0, 2, 3)))  # keyed
    shuffles = Protocol(dataclasses.replace(cfg, null="shuffles"), seed=2).dependence(f, idx, (1, 0, 2, 3))
    exact = split_half_mean(f, idx, generator=proto.generator(1, 0, 2, 3))
    assert float(h.mean()) == pytest.approx(exact, rel=0.02)  # quantile mean of the Gamma ≈ its mean
    assert abs(float(shuffles.mean()) - exact) < 4 * float(shuffles.std()) / 50**0.5


def test_compare_unlearning_on_the_users_models_pairs_the_draws() -> None:
    """original / unlearned / retrained models of the user's own: each judged as evaluate_unlearning judges it
    alone with the same seed, and the differences are taken draw by draw."""
    torch.manual_seed(0)
    x = torch.randn(200, 1, 4, 4)
    original = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 8), torch.nn.ReLU())
    unlearned = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 8), torch.nn.Tanh())
    retrained = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 8))
    kw: dict[str, Any] = {"subset_size": 16, "n_targets": 3, "protocol_draws": 3, "n_shuffles": 20, "seed": 5}
    data = (x[:50], DataLoader(TensorDataset(x[50:130], torch.zeros(80)), batch_size=40), x[130:])
    out = compare_unlearning(original, unlearned, *data, retrained=retrained, **kw)
    for name, model in (("original", original), ("unlearned", unlearned), ("retrained", retrained)):
        assert out[name]["otr_draws"] == evaluate_unlearning(model, x[:50], x[50:130], x[130:], **kw)["otr_draws"]
    want = [u - o for u, o in zip(out["unlearned"]["otr_draws"], out["original"]["otr_draws"], strict=True)]
    assert out["forgetting"]["draws"] == pytest.approx(want, abs=1e-15)
    assert out["forgetting"]["mean"] == pytest.approx(sum(want) / 3)
    gap = [u - r for u, r in zip(out["unlearned"]["otr_draws"], out["retrained"]["otr_draws"], strict=True)]
    assert out["gap_to_retrained"]["draws"] == pytest.approx(gap, abs=1e-15)
    same = compare_unlearning(original, original, *data, **kw)
    assert same["forgetting"]["draws"] == [0.0, 0.0, 0.0] and same["retrained"] is None
    assert "gap_to_retrained" not in same
