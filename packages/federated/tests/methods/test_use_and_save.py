"""The tools contracts: the final global models saved and loadable, degenerate results hold no claim,
``fit`` on a user's own network and partitions, ``--dry-run``."""

from __future__ import annotations

import copy
import logging
import random
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from iclr26_federated.methods.fedopenmatch import FedOpenMatchConfig, fit
from iclr26_federated.methods.fedopenmatch.claims import claims
from iclr26_federated.methods.fedopenmatch.config import PRESETS, VARIANTS
from iclr26_federated.methods.fedopenmatch.spec import SPEC
from iclr26_shared.testing import Arms, assert_models_roundtrip, assert_no_claim_holds, smoke_run

K = 6
OPEN_TRIVIAL, CLOSED_TRIVIAL = 1 / (K + 1), 1 / K


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return smoke_run(SPEC, tmp_path_factory.mktemp("smoke"))


def test_every_final_global_model_is_saved_and_loads_bit_for_bit(smoke) -> None:
    run, results = smoke
    probe = torch.randn(3, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    names = {f"{v}-seed0" for v in PRESETS["smoke"].variants}
    assert set(run.saved_models) == names
    assert_models_roundtrip(run, dict.fromkeys(names, probe))
    # the saved model is the job's final global model: its test metrics are the job's final ones
    from iclr26_federated.methods.fedopenmatch.config import job_params
    from iclr26_federated.methods.fedopenmatch.dataset import load_split
    from iclr26_federated.methods.fedopenmatch.model import evaluate
    from iclr26_shared.models import load_model

    params = job_params(PRESETS["smoke"], "fedopenmatch", 0)
    split = load_split(params)
    m = evaluate(load_model(run.path, "fedopenmatch-seed0"), split.test_x, split.test_y, params).to_dict()
    (job,) = [j for j in results["jobs"] if j["variant"] == "fedopenmatch"]
    assert m == pytest.approx(job["final"], abs=1e-6)


def _stats(open_bacc: float, closed_acc: float) -> dict[str, Any]:
    s: dict[str, Any] = {"n_seeds": 1}
    for m, v in (("open_bacc", open_bacc), ("closed_acc", closed_acc), ("unknown_recall", 0.6), ("known_recall", 0.9)):
        s |= {f"{m}_mean": v, f"{m}_std": 0.0, m: [v]}
    return s


def _working() -> dict[str, Any]:
    """Results in which every claim holds (ours clearly ahead), numbers of the quick preset's size."""
    per = {v: (0.80, 0.90) for v in VARIANTS}
    per["fedopenmatch"] = (0.86, 0.94)
    counts = [100] * K + [400]
    return {"variants": {v: _stats(*per[v]) for v in VARIANTS}, "known_classes": K, "test_class_counts": counts}


def _open_arms(trivial: float = OPEN_TRIVIAL) -> Arms:
    others = [f"variants/{v}/open_bacc_mean" for v in VARIANTS if v not in ("fedopenmatch", "labeled-only")]
    return Arms(ours=["variants/fedopenmatch/open_bacc_mean"], others=others, trivial=trivial, worse=0.05)


_CLOSED_ARMS = Arms(
    ours=["variants/fedopenmatch/closed_acc_mean"],
    others=["variants/labeled-only/closed_acc_mean"],
    trivial=CLOSED_TRIVIAL,
    worse=0.05,
)


def _with(results: dict[str, Any], per_variant: dict[str, tuple[float, float]]) -> dict[str, Any]:
    out = copy.deepcopy(results)
    for name, (o, c) in per_variant.items():
        out["variants"][name] = _stats(o, c)
    return out


def test_degenerate_results_hold_no_claim() -> None:
    base = _working()
    assert all(c.holds for c in claims(base)), [(c.claim, c.verdict) for c in claims(base)]
    baselines = [v for v in VARIANTS if v != "fedopenmatch"]
    ours = "fedopenmatch"
    extra = {
        # every variant rejects every test image (the paper's OpenMatch at 1.74, for all of them)
        "every variant all-unknown": _with(base, dict.fromkeys(VARIANTS, (OPEN_TRIVIAL, 0.9))),
        "FedOpenMatch collapsed to one class": _with(base, {ours: (OPEN_TRIVIAL, CLOSED_TRIVIAL)}),
        "FedOpenMatch inside the chance band": _with(base, {ours: (OPEN_TRIVIAL + 0.015, CLOSED_TRIVIAL + 0.015)}),
        # issue 40: ours only just above baselines that sit at chance
        "ours just above baselines at chance": _with(
            base, dict.fromkeys(baselines, (OPEN_TRIVIAL, CLOSED_TRIVIAL)) | {ours: (0.17, 0.20)}
        ),
        "baselines barely above chance, ours inside the band": _with(
            base,
            dict.fromkeys(baselines, (OPEN_TRIVIAL + 0.002, CLOSED_TRIVIAL + 0.002))
            | {ours: (OPEN_TRIVIAL + 0.015, CLOSED_TRIVIAL + 0.015)},
        ),
        "ours ahead of every baseline by less than the margin": _with(base, {ours: (0.80 + 0.009, 0.90 + 0.009)}),
    }
    out = assert_no_claim_holds(claims, base, [_open_arms(), _CLOSED_ARMS], extra_cases=extra)
    assert {c.verdict for c in out["FedOpenMatch collapsed to one class"]} == {"fails"}
    assert {c.verdict for c in out["ours just above baselines at chance"]} == {"inconclusive"}


def test_degenerate_smoke_results_hold_no_claim(smoke) -> None:
    _, real = smoke
    # the smoke run's results (every key the CLI writes), with ours put ahead so that a claim can break
    results = copy.deepcopy(real)
    lo = results["variants"]["labeled-only"]["closed_acc_mean"]
    results["variants"]["fedopenmatch"]["closed_acc_mean"] = min(1.0, max(lo, results["closed_acc_trivial"]) + 0.1)
    arms = [
        Arms(
            ours=["variants/fedopenmatch/closed_acc_mean"],
            others=["variants/labeled-only/closed_acc_mean"],
            trivial=results["closed_acc_trivial"],
            worse=0.0,
        )
    ]
    assert_no_claim_holds(SPEC, results, arms)


def _digits() -> dict[str, Any]:
    from sklearn.datasets import load_digits

    d: Any = load_digits()
    x, y = (d.images * 15.9).astype(np.uint8), d.target
    rng = np.random.default_rng(0)
    server = np.concatenate([rng.choice(np.flatnonzero(y == k), 10, replace=False) for k in range(3)])
    pool = rng.permutation(np.setdiff1d(np.flatnonzero(y < 5), server))
    test = pool[120:220]
    return {
        "server": (x[server], y[server]),
        "clients": [x[pool[:50]], torch.from_numpy(x[pool[50:120]])],  # an array and a tensor
        "test": (x[test], np.where(y[test] < 3, y[test], 3)),
    }


def test_fit_trains_a_users_own_network_on_their_own_clients() -> None:
    from iclr26_federated.data.augment import normalize
    from iclr26_federated.nn.metrics import openmatch_predict

    data = _digits()
    extractor = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
    before = copy.deepcopy(extractor.state_dict())
    cfg = FedOpenMatchConfig(num_rounds=2, warmup_steps=10, server_steps=3, batch_size=16)
    logging.getLogger("flwr").setLevel(logging.WARNING)
    torch.manual_seed(11)
    np.random.seed(11)
    random.seed(11)
    rng_before = torch.random.get_rng_state(), np.random.rand(0), np.random.get_state(legacy=False), random.getstate()
    res = fit(extractor, data["server"], data["clients"], data["test"], num_known=3, config=cfg)
    # the caller's global RNG states and the flwr logger's level are as they were
    assert torch.equal(torch.random.get_rng_state(), rng_before[0])
    np_after = np.random.get_state(legacy=False)
    assert np.array_equal(np_after["state"]["key"], rng_before[2]["state"]["key"])
    assert np_after["state"]["pos"] == rng_before[2]["state"]["pos"] and random.getstate() == rng_before[3]
    assert logging.getLogger("flwr").level == logging.WARNING
    assert [r["round"] for r in res.history] == [0, 1, 2] and not res.failures
    assert all(torch.equal(before[k], v) for k, v in extractor.state_dict().items())  # the user's copy untouched
    assert res.model.inlier_head.out_features == 3 and res.model.ova_head.in_features == 16
    # the returned model is the final global model: an independent balanced accuracy of its predictions
    with torch.no_grad():
        pred = openmatch_predict(*res.model(normalize(torch.from_numpy(data["test"][0])))).numpy()
    y = data["test"][1]
    bacc = np.mean([np.mean(pred[y == c] == c) for c in np.unique(y)])
    assert res.final["open_bacc"] == pytest.approx(bacc, abs=1e-6)


def test_fit_rejects_bad_user_data_in_one_line() -> None:
    data = _digits()
    net = nn.Sequential(nn.Flatten())
    with pytest.raises(ValueError, match="at least 2 clients"):
        fit(net, data["server"], data["clients"][:1], data["test"], num_known=3)
    with pytest.raises(ValueError, match=r"server labels must be integers in \[0, 2\]"):
        fit(net, (data["server"][0], data["server"][1] + 5), data["clients"], data["test"], num_known=3)
    with pytest.raises(ValueError, match=r"^float images must lie in \[-1, 1\] .* got values in \[0, 254\]"):
        fit(net, (data["server"][0] * 1.0, data["server"][1]), data["clients"], data["test"], num_known=3)
    with pytest.raises(ValueError, match=r"^images must be uint8/integers in \[0, 255\] or floats in \[-1, 1\]"):
        fit(
            net, (data["server"][0].astype(np.int64) - 1, data["server"][1]), data["clients"], data["test"], num_known=3
        )


def test_float_images_in_minus_one_one_are_the_uint8_images_the_extractor_sees() -> None:
    from iclr26_federated.data.augment import normalize
    from iclr26_federated.methods.fedopenmatch.api import to_images

    u8 = np.random.default_rng(0).integers(0, 256, (4, 8, 8), dtype=np.uint8)
    as_float = normalize(torch.from_numpy(u8))[:, 0]  # what the extractor receives, in [-1, 1]
    assert float(as_float.min()) >= -1 and float(as_float.max()) <= 1
    assert np.array_equal(to_images(as_float), u8)  # a float tensor maps back to the same uint8 images
    assert np.array_equal(to_images(as_float.numpy().astype(np.float32)), u8)
    assert np.array_equal(to_images(u8.astype(np.int32)), u8)
    assert np.array_equal(to_images(np.full((1, 2, 2), -1.0)), np.zeros((1, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="got values in"):
        to_images(np.full((1, 2, 2), np.nan))


def test_dry_run_smoke_builds_and_steps() -> None:
    from iclr26_shared.dryrun import dry_run

    out = dry_run(SPEC, PRESETS["smoke"], "cpu")
    from iclr26_federated.nn.models import build_model

    expected = sum(p.numel() for p in build_model("cnn", 1, K, PRESETS["smoke"].width, 0).parameters())
    assert out["parameters"] == expected and np.isfinite(out["train_loss"]) and np.isfinite(out["server_loss"])


@pytest.mark.slow
def test_dry_run_full_resnet18() -> None:
    from iclr26_shared.dryrun import dry_run

    out = dry_run(SPEC, PRESETS["full"], "cpu")
    assert out["parameters"] > 11_000_000 and np.isfinite(out["train_loss"])
