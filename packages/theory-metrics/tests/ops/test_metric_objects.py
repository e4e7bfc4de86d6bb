"""The metrics as metric objects: NumPy input, update / compute / reset, higher_is_better, DDP sync (gloo)."""

from __future__ import annotations

import math
import os
import pickle
import socket
from pathlib import Path

import pytest
import torch

from iclr26_theory_metrics import (
    HIGHER_IS_BETTER,
    METRIC_KEYS,
    NC4Counter,
    NCAccumulator,
    NCInputError,
    NeuralCollapse,
    RichnessAccumulator,
    RichnessInputError,
    higher_is_better,
    hsic,
    neural_collapse_metrics,
    richness,
)


def _problem(n: int = 90, k: int = 4, p: int = 6, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % k
    means = 3.0 * torch.randn(k, p, generator=g, dtype=torch.float64) + 50.0  # far from the origin
    h = means[y] + 0.5 * torch.randn(n, p, generator=g, dtype=torch.float64)
    w = means - means.mean(0) + 0.3 * torch.randn(k, p, generator=g, dtype=torch.float64)
    return h, y, w


def _same(a: dict[str, float], b: dict[str, float], rel: float = 1e-12) -> None:
    assert set(a) == set(b)
    for key in a:
        if math.isnan(b[key]):
            assert math.isnan(a[key]), key
        else:
            assert a[key] == pytest.approx(b[key], rel=rel, abs=1e-12), key


def test_numpy_and_torch_give_the_same_values() -> None:
    h, y, w = _problem()
    bias = torch.linspace(-0.1, 0.1, 4, dtype=torch.float64)
    _same(
        neural_collapse_metrics(h.numpy(), y.numpy(), w.numpy(), bias=bias.numpy(), eval_features=h[:20].numpy()),
        neural_collapse_metrics(h, y, w, bias=bias, eval_features=h[:20]),
        rel=0.0,
    )
    out = h @ w.T
    assert richness(h.numpy(), out.numpy()) == richness(h, out)
    assert float(hsic(h.numpy(), out.numpy())) == float(hsic(h, out))
    with pytest.raises(NCInputError, match="labels must be a torch.Tensor or a NumPy array, got list"):
        neural_collapse_metrics(h, y.tolist(), w)  # pyright: ignore[reportArgumentType]


def test_richness_takes_1d_outputs_as_one_channel() -> None:
    h, _, w = _problem()
    f = h @ w[0]  # [n]
    assert richness(h, f) == richness(h, f[:, None])
    assert 0.0 < richness(h, f) < 1.0
    acc = RichnessAccumulator()
    acc.update(h[:40], f[:40].numpy())
    acc.update(h[40:], f[40:])
    assert acc.compute() == pytest.approx(richness(h, f[:, None]), rel=1e-10)
    with pytest.raises(RichnessInputError, match=r"outputs must be 2-D \[n, dim\] or 1-D \[n\] \(one channel\)"):
        richness(h, torch.zeros(90, 2, 2))
    with pytest.raises(RichnessInputError, match=r"features must be 2-D \[n, dim\], got shape \(90,\)"):
        richness(f, h)


def test_update_compute_reset() -> None:
    h, y, w = _problem()
    acc = NCAccumulator(4, 6)
    for start in range(0, 90, 25):
        acc.update(h[start : start + 25], y[start : start + 25].numpy())
    stats = acc.compute()
    ref = acc.finalize()
    assert torch.equal(stats.means, ref.means) and torch.equal(stats.within_cov, ref.within_cov)
    torch.testing.assert_close(stats.means, torch.stack([h[y == c].mean(0) for c in range(4)]), rtol=1e-13, atol=0)
    acc.reset()
    assert acc.num_samples == 0
    with pytest.raises(NCInputError, match="no features were accumulated"):
        acc.compute()
    acc.update(h[y < 2], y[y < 2])
    with pytest.raises(NCInputError, match=r"class\(es\) \[2, 3\] have no samples"):
        acc.compute()

    metric = NeuralCollapse(w)
    for start in range(0, 90, 30):
        metric.update(h[start : start + 30], y[start : start + 30])
    counter = metric.nc4_counter()
    counter.update(h[:50])
    counter.update(h[50:].numpy())
    full = neural_collapse_metrics(h, y, w)
    assert counter.compute() == counter.agreement == full["nc4_agreement"]
    got = metric.compute()
    assert math.isnan(got["nc4"])  # NC4 takes the second pass
    _same(
        {k: v for k, v in got.items() if not k.startswith("nc4")},
        {k: v for k, v in full.items() if not k.startswith("nc4")},
        rel=1e-10,
    )
    metric.nc4_agreement = counter.compute()
    _same(metric.compute(), full, rel=1e-10)
    metric.reset()
    metric.update(h, y)
    _same(metric.compute(), full, rel=1e-10)
    counter.reset()
    with pytest.raises(NCInputError, match="at least one evaluation feature"):
        counter.compute()

    rich = RichnessAccumulator()
    rich.update(h, h @ w.T)
    first = rich.compute()
    rich.reset()
    with pytest.raises(RichnessInputError, match="n = 0"):
        rich.compute()
    rich.update(h, h @ w.T)
    assert rich.compute() == first == rich.value()


def test_higher_is_better_is_declared_per_metric() -> None:
    assert set(HIGHER_IS_BETTER) == set(METRIC_KEYS)
    assert HIGHER_IS_BETTER["nc4"] and HIGHER_IS_BETTER["nc4_agreement"] and not HIGHER_IS_BETTER["nc4_mismatch"]
    for key in ("nc0", "nc1", "nc2", "nc3", "nc0_squared", "alpha", "nc2m", "nc3_duality"):
        assert HIGHER_IS_BETTER[key] is False
    assert higher_is_better("nc4") and not higher_is_better("nc4", nc4_form="mismatch")
    assert NC4Counter.higher_is_better is True and NeuralCollapse.higher_is_better is HIGHER_IS_BETTER
    assert RichnessAccumulator.higher_is_better is None  # D_LR describes the dynamics, it does not score
    with pytest.raises(NCInputError, match="key must be one of"):
        higher_is_better("nc5")


def _rank_data(rank: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    h, y, w = _problem()
    # uneven shares: rank 0 sees 20 rows of classes 0 and 1 only, rank 1 the other 70
    first = torch.nonzero(y < 2).flatten()[:20]
    mask = torch.zeros(90, dtype=torch.bool)
    mask[first] = True
    return (h[mask], y[mask], w) if rank == 0 else (h[~mask], y[~mask], w)


def _ddp_worker(rank: int, world: int, port: int, out_dir: str) -> None:
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world)
    try:
        h, y, w = _rank_data(rank)
        acc = NCAccumulator(4, 6)
        metric = NeuralCollapse(w)
        rich = RichnessAccumulator()
        rich_uncentred = RichnessAccumulator(centre_outputs=False)
        for start in range(0, h.shape[0], 15):
            acc.update(h[start : start + 15], y[start : start + 15])
            metric.update(h[start : start + 15], y[start : start + 15])
            rich.update(h[start : start + 15], h[start : start + 15] @ w.T)
            rich_uncentred.update(h[start : start + 15], h[start : start + 15] @ w.T)
        counter = metric.nc4_counter()
        counter.update(h)
        stats = acc.compute()
        result = {
            "means": stats.means,
            "within": stats.within_cov,
            "counts": stats.counts,
            "nc": metric.compute(),
            "nc4": counter.compute(),
            "nc4_local": counter.agreement,
            "d_lr": rich.compute(),
            "d_lr_uncentred": rich_uncentred.compute(),
            "d_lr_local": rich.compute_local(),
            "local_counts": acc.finalize().counts if rank == 1 else None,
        }
        (Path(out_dir) / f"rank{rank}.pkl").write_bytes(pickle.dumps(result))
    finally:
        torch.distributed.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not built")
def test_ddp_sync_over_two_gloo_processes_equals_one_process(tmp_path: Path) -> None:
    torch.multiprocessing.spawn(  # pyright: ignore[reportPrivateImportUsage]
        _ddp_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True
    )
    results = [pickle.loads((tmp_path / f"rank{r}.pkl").read_bytes()) for r in range(2)]
    h, y, w = _problem()
    ref = NCAccumulator(4, 6)
    ref.update(h, y)
    stats = ref.compute()
    out = h @ w.T
    for res in results:  # every process gets the global value
        torch.testing.assert_close(res["means"], stats.means, rtol=1e-12, atol=0)
        torch.testing.assert_close(res["within"], stats.within_cov, rtol=1e-10, atol=1e-14)
        assert torch.equal(res["counts"], stats.counts)
        _same(
            res["nc"],
            neural_collapse_metrics(h, y, w) | {"nc4": math.nan, "nc4_agreement": math.nan, "nc4_mismatch": math.nan},
            rel=1e-9,
        )
        assert res["nc4"] == neural_collapse_metrics(h, y, w)["nc4_agreement"]
        assert res["d_lr"] == pytest.approx(richness(h, out), rel=1e-10)
        assert res["d_lr_uncentred"] == pytest.approx(richness(h, out, centre_outputs=False), rel=1e-10)
    # the local values stay local: rank 1 alone saw 70 rows
    assert results[1]["local_counts"].sum() == 70
    rest = torch.ones(90, dtype=torch.bool)
    rest[torch.nonzero(y < 2).flatten()[:20]] = False
    assert results[1]["d_lr_local"] == pytest.approx(richness(h[rest], out[rest]), rel=1e-10)
    assert results[0]["d_lr_local"] != pytest.approx(results[0]["d_lr"], rel=1e-6)
