"""No public function of the package changes the caller's global random state (torch, numpy, random)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from iclr26_graphs.data.graph_domains import make_domains
from iclr26_graphs.methods.ogmm import train as ogmm_train
from iclr26_graphs.methods.ogmm.config import PRESETS
from iclr26_shared.seeding import global_rng

CFG = dataclasses.replace(
    PRESETS["smoke"], expert_epochs=2, hidden=8, gen_graphs=4, gen_nodes=6, gen_epochs=2, merge_epochs=1, kd_epochs=1
)


def _states() -> tuple[Any, ...]:
    return (
        torch.random.get_rng_state(),
        np.asarray(cast(tuple, np.random.get_state(legacy=True))[1]).copy(),
        random.getstate(),
    )


def _assert_untouched(call: Callable[[], object]) -> None:
    torch.manual_seed(123)
    np.random.seed(123)
    random.seed(123)
    before = _states()
    call()
    after = _states()
    assert torch.equal(before[0], after[0]), "torch's global RNG state changed"
    assert np.array_equal(before[1], after[1]), "numpy's global RNG state changed"
    assert before[2] == after[2], "random's global state changed"


def test_global_rng_restores_every_state_after_draws_and_errors() -> None:
    torch.manual_seed(5)
    before = _states()
    with pytest.raises(RuntimeError), global_rng():
        torch.manual_seed(0)
        np.random.seed(0)
        random.seed(0)
        _ = torch.rand(2), np.random.rand(2), random.random()
        raise RuntimeError("inside")
    after = _states()
    assert torch.equal(before[0], after[0]) and np.array_equal(before[1], after[1]) and before[2] == after[2]


def test_fgl_fit_keeps_the_global_rng_and_is_seeded() -> None:
    from torch_geometric.datasets import FakeDataset

    from iclr26_graphs.methods.fgl import fit

    data = cast(Data, FakeDataset(num_graphs=1, avg_num_nodes=40, num_channels=4, num_classes=2, task="node")[0])
    split = torch.rand(int(data.num_nodes or 0), generator=torch.Generator().manual_seed(0))
    data.train_mask, data.val_mask = split < 0.5, split >= 0.5
    kw: dict[str, Any] = dict(num_trees=2, knn_k=0, hidden_channels=4, epochs=2, pseudo_epochs=2, estimator_epochs=2)
    _assert_untouched(lambda: fit(data, **kw))
    torch.manual_seed(1)
    a, _ = fit(data, **kw)
    torch.manual_seed(2)  # another caller state: the same model (fit draws only from its seed)
    b, _ = fit(data, **kw)
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_ogmm_public_functions_keep_the_global_rng() -> None:
    split = make_domains("motifs", seed=0, per_domain=16, target_size=8, nodes=(6, 8))
    _assert_untouched(lambda: ogmm_train.train_expert("gcn", split.a_train, 2, CFG, 0, 0))
    experts = [
        (f"gcn-{d}", ogmm_train.train_expert("gcn", s, 2, CFG, 0, i))
        for i, (d, s) in enumerate((("A", split.a_train), ("B", split.b_train)))
    ]
    _assert_untouched(lambda: ogmm_train.generate(experts[0][1], 2, CFG, 0))
    graphs, _ = ogmm_train.generate(experts[0][1], 2, CFG, 0)
    _assert_untouched(lambda: ogmm_train.merge(experts, graphs, CFG, 1, 0))
    _assert_untouched(lambda: ogmm_train.merge_experts(experts, 2, dataclasses.replace(CFG, top_k=1)))
    _assert_untouched(lambda: ogmm_train.kd_student(experts, graphs, CFG, "gcn", 0))
    # generation draws only from its seed: the same graphs from two caller states
    torch.manual_seed(7)
    again, _ = ogmm_train.generate(experts[0][1], 2, CFG, 0)
    assert torch.equal(again.x, graphs.x) and torch.equal(again.adj, graphs.adj)
