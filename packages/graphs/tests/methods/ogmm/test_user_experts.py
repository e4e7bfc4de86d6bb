"""OGMM on a user's own PyG experts: merge settings apart from the experiment's, PyG inputs, bit-exact
save/load of the merged model with each expert saved by its own mechanism."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import nn
from torch_geometric.data import Batch
from torch_geometric.datasets import FakeDataset
from torch_geometric.nn import GCNConv, global_mean_pool

from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.methods.ogmm import MergeConfig, MergedGNN, OGMMConfig, PyGExpert, graphs_from_data, merge_experts
from iclr26_shared.errors import ConfigError

FAST = MergeConfig(gen_graphs=4, gen_nodes=6, gen_epochs=2, merge_epochs=2, merge_batch=4)


class PlainGCN(nn.Module):
    """A user's plain PyG model: GCNConv -> BatchNorm -> mean pool -> linear head; ``config`` rebuilds it."""

    def __init__(self, d: int = 5, h: int = 8, c: int = 2) -> None:
        super().__init__()
        self.config = {"d": d, "h": h, "c": c}
        self.conv, self.bn, self.out = GCNConv(d, h), nn.BatchNorm1d(h), nn.Linear(h, c)

    def pooled(self, x, edge_index, edge_weight, batch):
        return global_mean_pool(self.bn(self.conv(x, edge_index, edge_weight)).relu(), batch)


class HubGCN(nn.Module, PyTorchModelHubMixin):
    """A user's PyG model that saves itself (huggingface_hub's mixin)."""

    def __init__(self, d: int = 5, h: int = 8, c: int = 2) -> None:
        super().__init__()
        self.conv, self.bn, self.head = GCNConv(d, h), nn.BatchNorm1d(h), nn.Linear(h, c)

    def embed(self, x, edge_index, edge_weight, batch):
        return global_mean_pool(self.bn(self.conv(x, edge_index, edge_weight)).relu(), batch)


def _experts() -> list[tuple[str, PyGExpert]]:
    torch.manual_seed(0)
    out = []
    for i in range(3):
        plain = PlainGCN().eval()
        out.append((f"plain-{i}", PyGExpert(plain, 5, embed=plain.pooled, head=plain.out)))
    out.append(("hub", PyGExpert(HubGCN().eval(), 5)))
    for _, e in out:
        with torch.no_grad():
            e.bns[0].running_mean.normal_()  # pyright: ignore[reportCallIssue,reportAttributeAccessIssue]
    return out


def _graphs() -> list:
    torch.manual_seed(1)
    return list(FakeDataset(num_graphs=5, avg_num_nodes=7, num_channels=5, num_classes=2, task="graph"))


def test_top_k_is_checked_against_the_experts_merged_not_the_harness() -> None:
    assert MergeConfig(top_k=7).top_k == 7  # the library's settings take any k
    with pytest.raises(ConfigError, match="top_k"):
        OGMMConfig(top_k=7)  # the experiment holds archs and top_k: 2 x 3 = 6 experts
    with pytest.raises(GraphInputError, match=r"^top_k = 5: expected 1\.\.4"):
        merge_experts(_experts(), 2, MergeConfig(top_k=5))


def test_pyg_inputs_at_the_merged_models_boundary() -> None:
    merged, _ = merge_experts(_experts(), 2, FAST.__class__(**{**FAST.__dict__, "top_k": 2}), seed=0)
    graphs = _graphs()
    batch: Any = Batch.from_data_list(graphs)
    dense = graphs_from_data(graphs)
    with torch.no_grad():
        want = merged(dense.x, dense.adj, dense.mask)
        assert isinstance(want, tuple) and len(want) == 3
        from_batch = merged(batch)
        from_triple = merged(batch.x, batch.edge_index, batch.batch)
        one = merged(graphs[0].x, graphs[0].edge_index)  # one graph, no batch vector
    assert torch.equal(from_batch, from_triple) and from_batch.shape == (5, 2)
    torch.testing.assert_close(from_batch, want[0], atol=1e-6, rtol=0)
    torch.testing.assert_close(one, want[0][:1], atol=1e-6, rtol=0)
    with torch.no_grad():
        assert len(merged(batch, return_all=True)) == 3
    with pytest.raises(GraphInputError, match="expected a dense batch"):
        merged(dense.x, dense.adj)


def test_a_merge_over_the_users_pyg_experts_saves_and_reloads_bit_exactly(tmp_path) -> None:
    merged, generated = merge_experts(_experts(), 2, FAST, seed=0)
    merged.save_pretrained(tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    kinds = [(s["class"].split(":")[1], s["hub"], s["init"]) for s in config["expert_specs"]]
    assert kinds == [("PlainGCN", False, {"d": 5, "h": 8, "c": 2})] * 3 + [("HubGCN", True, {})]
    assert (tmp_path / "m" / "experts" / "3" / "model.safetensors").is_file()  # the hub expert saved itself
    assert not (tmp_path / "m" / "experts" / "0").exists()
    again = MergedGNN.from_pretrained(tmp_path / "m", strict=True)
    a, b = merged.state_dict(), again.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    x, adj, mask = generated.x, generated.adj, generated.mask
    with torch.no_grad():
        assert all(torch.equal(p, q) for p, q in zip(merged(x, adj, mask), again(x, adj, mask), strict=True))
        # the gate noise continues from the saved generator state: training-mode outputs agree too
        merged.train()
        again.train()
        assert torch.equal(merged(x, adj, mask)[0], again(x, adj, mask)[0])
        assert torch.equal(merged.noise_state, again.noise_state)  # pyright: ignore[reportArgumentType]


def test_loading_needs_the_users_classes_one_line_errors(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    merged, _ = merge_experts(_experts()[:2], 2, FAST, seed=0)
    merged.save_pretrained(tmp_path / "m")
    cfg_file = tmp_path / "m" / "config.json"
    config = json.loads(cfg_file.read_text())
    config["expert_specs"][0]["class"] = "no_such_user_package.models:PlainGCN"
    cfg_file.write_text(json.dumps(config))
    with pytest.raises(GraphInputError, match=r"^expert class no_such_user_package.models:PlainGCN .* not imported"):
        MergedGNN.from_pretrained(tmp_path / "m")
    with pytest.raises(GraphInputError, match=r"^cannot import the expert class no_such_user_package"):
        MergedGNN.from_pretrained(tmp_path / "m", trust_expert_classes=True)
    config["expert_specs"][0]["class"] = f"{PlainGCN.__module__}:PlainGCN"
    config["expert_specs"][0]["init"] = {"d": 5, "bogus": 1}
    cfg_file.write_text(json.dumps(config))
    with pytest.raises(GraphInputError, match=r"^cannot rebuild the expert .*PlainGCN\(\*\*"):
        MergedGNN.from_pretrained(tmp_path / "m")
    assert PlainGCN.__module__ in sys.modules

    class Local(PlainGCN):
        pass

    local = Local().eval()
    merged_local, _ = merge_experts([("a", PyGExpert(local, 5, embed=local.pooled, head=local.out))] * 2, 2, FAST)
    with pytest.raises(GraphInputError, match="defined inside a function"):
        merged_local.save_pretrained(tmp_path / "local")
    plain = PlainGCN().eval()
    lam = PyGExpert(plain, 5, embed=lambda x, ei, ew, b: plain.pooled(x, ei, ew, b), head=plain.out)
    merged_lam, _ = merge_experts([("a", lam), ("b", lam)], 2, FAST)
    with pytest.raises(GraphInputError, match="embed must be a method"):
        merged_lam.save_pretrained(tmp_path / "lam")
