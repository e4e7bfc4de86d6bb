"""OGMM: Gumbel adjacency, BN matching, gate sparsity, head masks, data-free stage 2, data, config, claims, CLI."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch_geometric.nn import DenseGATConv

from iclr26_graphs.cli import METHODS, main
from iclr26_graphs.data.graph_domains import DenseGraphs, make_domains, motif_graph, motif_graphs
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.methods.ogmm import train as ogmm_train
from iclr26_graphs.methods.ogmm.claims import claims, report
from iclr26_graphs.methods.ogmm.config import PRESETS, OGMMConfig
from iclr26_graphs.methods.ogmm.model import (
    DenseExpert,
    GraphInverter,
    MergedGNN,
    SoftDenseGATConv,
    bn_matching_loss,
    gumbel_adjacency,
)
from iclr26_shared.errors import ConfigError, DataError
from iclr26_shared.testing import Arms, assert_close, assert_models_roundtrip, assert_no_claim_holds, smoke_run

SMOKE = PRESETS["smoke"]


def _tiny_domains(seed: int = 0):
    return make_domains("motifs", seed=seed, per_domain=24, target_size=12, nodes=(6, 8))


def _experts(split, archs=("gcn", "gin")) -> list[tuple[str, DenseExpert]]:
    cfg = dataclasses.replace(SMOKE, expert_epochs=3, hidden=8, archs=archs)
    out = []
    for i, arch in enumerate(archs):
        for dom, data in (("A", split.a_train), ("B", split.b_train)):
            out.append((f"{arch}-{dom}", ogmm_train.train_expert(arch, data, 2, cfg, i, len(out))))
    return out


# ---- stage 1 pieces ------------------------------------------------------------------------------------


def test_gumbel_adjacency_is_symmetric_zero_diagonal_and_differentiable() -> None:
    logits = torch.randn(3, 6, 6)
    logits = ((logits + logits.transpose(1, 2)) / 2).requires_grad_()
    adj = gumbel_adjacency(logits, 0.5, torch.Generator().manual_seed(0))
    assert torch.allclose(adj, adj.transpose(1, 2))
    assert torch.all(torch.diagonal(adj, dim1=1, dim2=2) == 0)
    assert bool(((adj >= 0) & (adj <= 1)).all())
    (adj * torch.randn(3, 6, 6)).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0
    hard = gumbel_adjacency(logits.detach(), 0.5, torch.Generator().manual_seed(0), hard=True)
    assert torch.allclose(hard, hard.round(), atol=1e-6)  # 0/1 up to the straight-through rounding
    inv = GraphInverter(2, 5, 4, 8, torch.Generator().manual_seed(0))
    x, a = inv(0.5)
    assert x.shape == (2, 5, 4) and torch.allclose(a, a.transpose(1, 2))
    _, stored = inv.hard_graphs()
    assert torch.equal(stored, stored.transpose(1, 2)) and torch.all(torch.diagonal(stored, dim1=1, dim2=2) == 0)


@pytest.mark.parametrize("arch", ["gcn", "gat", "gin"])
def test_bn_matching_loss_is_zero_on_the_experts_own_statistics(arch: str) -> None:
    torch.manual_seed(0)
    expert = DenseExpert(arch, 4, 8, 2).eval()  # pyright: ignore[reportArgumentType]
    x = torch.randn(5, 6, 4)
    adj = (torch.rand(5, 6, 6) < 0.4).float().triu(1)
    adj = adj + adj.transpose(1, 2)
    mask = torch.ones(5, 6, dtype=torch.bool)
    mask[0, 4:] = False
    with torch.no_grad():
        for layer, bn in enumerate(expert.bns):  # set each layer's running stats to the batch stats, in order
            h = expert.embed(x, adj, mask)[1][layer]
            assert isinstance(bn, torch.nn.BatchNorm1d)
            bn.running_mean.copy_(h.mean(0))  # pyright: ignore[reportOptionalMemberAccess]
            bn.running_var.copy_(h.var(0, unbiased=True))  # pyright: ignore[reportOptionalMemberAccess]
        own = float(bn_matching_loss(expert, expert.embed(x, adj, mask)[1]))
        other = float(bn_matching_loss(expert, expert.embed(x + 1.0, adj, mask)[1]))
    assert own == pytest.approx(0.0, abs=1e-10)
    assert other > 1e-3


def test_soft_gat_equals_pyg_dense_gat_on_binary_adjacency() -> None:
    torch.manual_seed(0)
    ours = SoftDenseGATConv(4, 6, heads=2, concat=False)
    ref = DenseGATConv(4, 6, heads=2, concat=False)
    ref.load_state_dict(ours.state_dict())
    x = torch.randn(3, 5, 4)
    adj = (torch.rand(3, 5, 5) < 0.5).float().triu(1)
    adj = adj + adj.transpose(1, 2)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1, 3:] = False
    assert torch.allclose(ours(x, adj, mask), ref(x, adj, mask), atol=1e-6)
    soft = adj.clone().requires_grad_()
    ours(x, soft * 0.9, mask).sum().backward()
    assert soft.grad is not None and float(soft.grad.abs().sum()) > 0  # PyG's masked_fill would give none


# ---- stage 2 pieces ------------------------------------------------------------------------------------


@pytest.mark.parametrize("gate_input", ["embeddings", "features"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_gate_sparsity_equals_k(k: int, gate_input: str) -> None:
    torch.manual_seed(0)
    experts = [DenseExpert("gcn", 4, 8, 2).eval() for _ in range(4)]
    model = MergedGNN(experts, 4, k, gate_input=gate_input)  # pyright: ignore[reportArgumentType]
    # the gate reads the 4 experts' 8-wide pooled embeddings, or the 4 node features
    assert model.w_gate.shape == ((32, 4) if gate_input == "embeddings" else (4, 4))
    with torch.no_grad():
        model.w_gate.normal_()
        model.w_noise.normal_()
    x, mask = torch.randn(7, 5, 4), torch.ones(7, 5, dtype=torch.bool)
    adj = (torch.rand(7, 5, 5) < 0.5).float().triu(1)
    adj = adj + adj.transpose(1, 2)
    for noisy in (False, True):
        g = model.gates(x, adj, mask, noisy=noisy)
        assert torch.equal((g > 0).sum(-1), torch.full((7,), k))
        assert torch.allclose(g.sum(-1), torch.ones(7))
    with pytest.raises(GraphInputError, match="top_k"):
        MergedGNN(experts, 4, 5)


def test_masks_start_at_one_and_reproduce_the_experts() -> None:
    torch.manual_seed(0)
    experts = [DenseExpert(a, 4, 8, 3).eval() for a in ("gcn", "gat", "gin")]  # pyright: ignore[reportArgumentType]
    model = MergedGNN([e for e in experts], 4, 1, gate_input="features").eval()
    assert all(bool((w == 1).all()) for w in model.mask_w) and all(bool((b == 1).all()) for b in model.mask_b)
    x = torch.randn(4, 5, 4)
    adj = (torch.rand(4, 5, 5) < 0.5).float().triu(1)
    adj = adj + adj.transpose(1, 2)
    mask = torch.ones(4, 5, dtype=torch.bool)
    each = model.expert_logits(x, adj, mask)
    for j, e in enumerate(experts):
        assert torch.allclose(each[:, j], e(x, adj, mask))
    with torch.no_grad():  # route everything to expert 2: Γ is that expert
        model.w_gate.zero_()
        model.w_gate[:, 2] = 10.0
    x = x.abs() + 0.1
    assert torch.allclose(model(x, adj, mask)[0], experts[2](x, adj, mask), atol=1e-6)
    with torch.no_grad():
        model.mask_w[2].mul_(0.5)
    assert not torch.allclose(model(x, adj, mask)[0], experts[2](x, adj, mask))


def test_merged_diagnostics_reset_the_masks_and_the_gate() -> None:
    torch.manual_seed(0)
    experts = [DenseExpert(a, 4, 8, 2).eval() for a in ("gcn", "gin", "gcn")]  # pyright: ignore[reportArgumentType]
    model = MergedGNN(experts, 4, 2, gate_input="features").eval()
    x = torch.randn(30, 6, 4)
    adj = (torch.rand(30, 6, 6) < 0.4).float().triu(1)
    adj, mask = adj + adj.transpose(1, 2), torch.ones(30, 6, dtype=torch.bool)
    with torch.no_grad():
        model.w_gate.normal_()
        plain_pred = model(x, adj, mask)[0].argmax(-1)  # the gate over the unmasked experts
        for w in model.mask_w:
            w.copy_(torch.randn_like(w))
        uniform_pred = model.expert_logits(x, adj, mask).mean(1).argmax(-1)
    assert not torch.equal(plain_pred, model(x, adj, mask)[0].argmax(-1))  # the masks matter here
    diag = ogmm_train.merged_diagnostics(model, DenseGraphs(x, adj, mask, plain_pred, torch.zeros(30).long()))
    assert diag["no_masks"] == 1.0
    diag = ogmm_train.merged_diagnostics(model, DenseGraphs(x, adj, mask, uniform_pred, torch.zeros(30).long()))
    assert diag["uniform_gate"] == 1.0
    assert not bool((model.mask_w[0] == 1).all())  # the model itself keeps its masks


def test_stage_2_touches_no_source_or_target_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stages 1 and 2 (and the data-free baselines) run with every data source disabled, and stage 2
    trains on exactly the generated graphs."""
    split = _tiny_domains()
    experts = _experts(split)
    cfg = dataclasses.replace(SMOKE, gen_graphs=6, gen_nodes=6, gen_epochs=3, merge_epochs=2, kd_epochs=1, hidden=8)

    def no_data(*args, **kwargs):
        raise AssertionError("source/target data was touched after stage 0")

    import iclr26_graphs.data.graph_domains as domains
    import iclr26_graphs.data.molecules as molecules

    for name in (
        "make_domains",
        "motif_graphs",
        "motif_graph",
        "_motif_domains",
        "_tu_domains",
        "read_tu",
        "_smallworld_domains",
        "smallworld_graphs",
        "_molecule_domains",
        "molecule_graphs",
        "split_by_density",
    ):
        monkeypatch.setattr(domains, name, no_data)
    for name in ("molecule_set", "g2_molecules", "substitute"):
        monkeypatch.setattr(molecules, name, no_data)
    monkeypatch.setattr(ogmm_train, "make_domains", no_data)
    monkeypatch.setattr(ogmm_train, "_domains", no_data)
    parts = [ogmm_train.generate(e, 2, cfg, j)[0] for j, (_, e) in enumerate(experts)]
    generated = DenseGraphs.cat(parts)
    seen: list[torch.Tensor] = []
    real = MergedGNN.forward

    def spy(self, x, adj, mask):
        if self.training:
            seen.append(x.detach().clone())
        return real(self, x, adj, mask)

    monkeypatch.setattr(MergedGNN, "forward", spy)
    ogmm_train.merge(experts, generated, cfg, 2, 0)
    ogmm_train.kd_student(experts, generated, cfg, "gin", 0)
    ogmm_train.inverse_x(generated, 2, cfg, "gcn", 0)
    ogmm_train.greedy_soup([e for n, e in experts if n.startswith("gcn")], generated)
    assert seen
    pool = generated.x.flatten(1)
    for batch in seen:
        for row in batch.flatten(1):
            assert bool(((pool - row).abs().amax(1) == 0).any()), "stage 2 saw a graph that was not generated"


def test_generation_reaches_its_label_on_a_trained_expert() -> None:
    split = make_domains("motifs", seed=1, per_domain=64, target_size=8, nodes=(8, 10))
    # 150 inversion epochs: at 60 the R_bn term had not converged and its comparison with random graphs
    # flipped with the thread count (1 thread 3.03 < 3.25, 2 threads 3.35 > 3.23, split seed 1); at 150 it
    # is ~0.3 against ~4 for random graphs on split seeds 1 and 2 at 1 and 2 threads (measured 2026-12-04).
    cfg = dataclasses.replace(SMOKE, expert_epochs=15, hidden=16, gen_graphs=16, gen_nodes=10, gen_epochs=150)
    # generate() seeds its edge MLP from its own seed (it used to read whatever the caller's global RNG held):
    # over seeds 0..4 (measured) seed 0 ends edgeless (R_bn 12.5 against 13.7 for random graphs: the known
    # collapse of the paper's form) and seeds 1..4 reach R_bn 0.24-0.36 against 3.8-4.2
    expert = ogmm_train.train_expert("gcn", split.a_train, 2, cfg, 0, 0)
    runs = [ogmm_train.generate(expert, 2, cfg, seed) for seed in (0, 1, 2)]
    assert all(stats["label_rate"] >= 0.75 for _, stats in runs)
    assert sum(stats["bn_generated"] < 0.5 * stats["bn_random"] for _, stats in runs) >= 2
    graphs = runs[1][0]
    # Inverse-X: a fresh GNN learns the generated graphs' conditioning labels (it starts near chance)
    fresh = ogmm_train.inverse_x(graphs, 2, cfg, "gin", 3)
    assert fresh is not expert and fresh.arch == "gin"
    assert ogmm_train.accuracy(ogmm_train.predict(fresh, graphs), graphs.y) >= 0.9


# ---- data, config, claims, CLI -------------------------------------------------------------------------


def test_motif_data_density_labels_and_features() -> None:
    gen = torch.Generator().manual_seed(0)
    e0 = motif_graph(10, 1.0, 0, gen)
    e1 = motif_graph(10, 1.0, 1, gen)
    assert e0.size(1) == 10 + 6 + 1 and e1.size(1) == 10 + 5 + 1
    g = motif_graphs(40, (3.0, 4.0), gen, nodes=(12, 16))
    assert abs(int(g.y.sum()) - 20) == 0
    assert torch.equal(g.adj, g.adj.transpose(1, 2))
    assert torch.allclose(g.x.sum(-1), g.mask.float())
    split = _tiny_domains()
    assert float(split.a_train.density.max()) < float(split.b_train.density.min())
    assert set(split.target.domain.tolist()) == {0, 1}
    between = make_domains("motifs", seed=0, per_domain=8, target_size=6, nodes=(6, 8), target="between")
    assert set(between.target.domain.tolist()) == {-1}
    with pytest.raises(GraphInputError, match="dataset"):
        make_domains("nope", seed=0)
    with pytest.raises(GraphInputError, match="label"):
        motif_graph(5, 1.0, 2, gen)


def test_tu_names_fail_offline_with_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch_geometric.datasets as pyg_datasets

    def offline(*args, **kwargs):
        raise OSError("no network")

    monkeypatch.setattr(pyg_datasets, "TUDataset", offline)
    with pytest.raises(DataError, match="MUTAG.*ICLR26_DATA"):
        make_domains("MUTAG", seed=0)


class _FakeTU:
    """A stand-in for PyG's ``TUDataset`` (indexable graphs with ``num_node_features``)."""

    def __init__(self, graphs: list, num_node_features: int) -> None:
        self.graphs, self.num_node_features = graphs, num_node_features

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, i: int):
        return self.graphs[i]


def _tu_graph(n: int, label: int, feats: int, bad: bool = False):
    from torch_geometric.data import Data

    edge_index = torch.tensor([list(range(n - 1)) + list(range(1, n)), list(range(1, n)) + list(range(n - 1))])
    x = torch.ones(n, feats)
    if bad:
        x[0, 0] = float("nan")
    return Data(x=x, edge_index=edge_index, y=torch.tensor([label]), num_nodes=n)


def test_tu_loader_splits_by_density_and_rejects_bad_files(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch_geometric.datasets as pyg_datasets

    graphs = [_tu_graph(3 + i % 7, i % 2, 3) for i in range(40)]
    monkeypatch.setattr(pyg_datasets, "TUDataset", lambda root, name: _FakeTU(graphs, 3))
    split = make_domains("MUTAG", seed=0)
    assert split.num_classes == 2 and split.num_features == 3
    sizes = [len(split.a_train), len(split.a_test), len(split.b_train), len(split.b_test), len(split.target)]
    assert sum(sizes) == 40 and min(sizes) > 0
    assert float(split.a_train.density.max()) <= float(split.b_train.density.min())
    bad = [*graphs[:-1], _tu_graph(4, 1, 3, bad=True)]
    monkeypatch.setattr(pyg_datasets, "TUDataset", lambda root, name: _FakeTU(bad, 3))
    with pytest.raises(DataError, match="NCI1 under .*NaN"):
        make_domains("NCI1", seed=0)
    one_class = [_tu_graph(3 + i % 7, 0, 3) for i in range(40)]
    monkeypatch.setattr(pyg_datasets, "TUDataset", lambda root, name: _FakeTU(one_class, 3))
    with pytest.raises(DataError, match="PTC_MR under .*one class"):
        make_domains("PTC_MR", seed=0)
    monkeypatch.setattr(pyg_datasets, "TUDataset", lambda root, name: _FakeTU(graphs[:4], 3))
    with pytest.raises(DataError, match="4 graphs"):
        make_domains("MUTAG", seed=0)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("top_k", 5, "top_k"),
        ("topk_sweep", (1, 2, 5), "topk_sweep"),
        ("topk_sweep", (0, 2), "topk_sweep"),
        ("dataset", "QM9", "dataset"),
        ("density_a", (1.0, 0.5), "density_a"),
        ("density_b", (0.2, 0.4), "density_b"),
        ("archs", ("gcn", "gcn"), "archs"),
        ("min_nodes", 30, "min_nodes"),
        ("gen_epochs", 0, "gen_epochs"),
        ("per_domain", 2, "per_domain"),
    ],
)
def test_bad_config_names_the_field(field: str, value: object, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        dataclasses.replace(SMOKE, **{field: value})


def test_bad_flag_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ogmm", "--preset", "smoke", "--top-k", "9", "--device", "cpu"]) == 2
    assert "top_k" in capsys.readouterr().err


def test_topk_sweep_above_the_experts_is_an_error_not_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    """The quick preset's sweep (1..5) with one architecture (2 experts) used to drop k = 3, 4, 5 silently."""
    with pytest.raises(ConfigError, match=r"topk_sweep.*2 × 1 = 2 \(\[3, 4, 5\] too large\)"):
        dataclasses.replace(PRESETS["quick"], archs=("gcn",))
    assert main(["ogmm", "--preset", "quick", "--archs", "gcn", "--device", "cpu"]) == 2
    assert "topk_sweep" in capsys.readouterr().err


BN_CLAIM = "Generated graphs match their expert's BatchNorm statistics better than random graphs, for every expert"
EXPERT_CLAIM = "The merged model beats every single expert on the target domain"


def _results(ours: float, best_expert: float, ens: float, rate: float, bn: tuple[float, float]) -> dict:
    return {
        "num_classes": 2,
        "target_accuracy": {
            "ogmm": ours,
            "gcn-A": best_expert,
            "gcn-B": 0.55,
            "ens-prob": ens,
            "ens-highconf": 0.5,
            "uni-soup-gcn": 0.6,
            "greedy-soup-gcn": 0.58,
            "kd": 0.6,
            "inverse-gcn": 0.62,
            "inverse-gin": 0.57,
        },
        "experts": [
            {"name": "gcn-A", "in_domain_acc": 0.95, "cross_domain_acc": 0.6},
            {"name": "gcn-B", "in_domain_acc": 0.9, "cross_domain_acc": 0.7},
        ],
        "generation": {
            "label_rate": rate,
            "bn_generated": bn[0],
            "bn_random": bn[1],
            "per_expert": [
                {"expert": n, "label_rate": rate, "bn_generated": bn[0], "bn_random": bn[1], "edge_density": 1.0}
                for n in ("gcn-A", "gcn-B")
            ],
        },
        "topk": {"1": 0.7, "2": ours, "3": 0.75},
        "routing_own_domain": 0.8,
    }


def test_claims_hold_fail_and_respect_chance() -> None:
    good = {c.claim: c for c in claims(_results(0.9, 0.8, 0.85, 0.95, (0.1, 2.0)))}
    assert all(c.verdict == "holds" for c in good.values()), [(k, c.verdict) for k, c in good.items()]
    assert len(good) == 9  # the top-k sweep is reported, not claimed
    assert not any("Top-k" in c for c in good)
    inverse = "The merged model beats model inversion without merging (Inverse-X) on the target domain"
    assert good[inverse].baseline == pytest.approx(0.62)  # the best X of the family
    bad = {c.claim: c for c in claims(_results(0.7, 0.8, 0.85, 0.5, (3.0, 2.0)))}
    assert bad["The merged model beats every single expert on the target domain"].verdict == "fails"
    assert bad["The merged model beats the ensembles (Ens-Prob, Ens-HighConf) on the target domain"].verdict == "fails"
    worse = _results(0.6, 0.55, 0.55, 0.95, (0.1, 2.0))
    assert {c.claim: c for c in claims(worse)}[inverse].verdict == "fails"
    assert bad[BN_CLAIM].verdict == "fails"
    # R_bn judged per expert on a log scale: one expert far below random cannot hide one above it (the mean
    # of the raw values, 1.02 vs 1.5, would have held)
    mixed = _results(0.9, 0.8, 0.85, 0.95, (0.1, 2.0))
    mixed["generation"]["per_expert"] = [
        {"expert": "gcn-A", "bn_generated": 0.03, "bn_random": 2.9},
        {"expert": "gin-A", "bn_generated": 2.0, "bn_random": 0.1},
    ]
    assert {c.claim: c for c in claims(mixed)}[BN_CLAIM].verdict == "fails"
    # a win inside one binomial standard deviation of the target accuracy (0.025 at 400 graphs) is no win
    near = _results(0.81, 0.8, 0.7, 0.95, (0.1, 2.0))
    near["sizes"] = {"target": 400}
    assert {c.claim: c for c in claims(near)}[EXPERT_CLAIM].verdict == "fails"
    # chance = the trivial level + 2 binomial SE on the target graphs (issue 56): 0.5 + 2·sqrt(0.25/400) = 0.55
    from iclr26_graphs.methods.ogmm.claims import chance_level

    assert chance_level(0.5, 400) == pytest.approx(0.5 + 2 * (0.25 / 400) ** 0.5) == pytest.approx(0.55)
    at_chance = _results(0.5, 0.5, 0.5, 0.5, (0.1, 2.0))
    at_chance["target_accuracy"]["gcn-B"] = 0.49
    at_chance["sizes"] = {"target": 400, "generated": 128}
    chance = {c.claim: c for c in claims(at_chance)}
    assert chance[EXPERT_CLAIM].chance == pytest.approx(0.55)
    assert chance[EXPERT_CLAIM].verdict == "fails"  # ours inside the chance band
    # ours well above, every expert inside the band (0.54 < 0.55): the baseline did not work, inconclusive
    lucky = _results(0.9, 0.54, 0.5, 0.95, (0.1, 2.0))
    lucky["target_accuracy"]["gcn-B"] = 0.53
    lucky["sizes"] = {"target": 400, "generated": 128}
    assert {c.claim: c for c in claims(lucky)}[EXPERT_CLAIM].verdict == "inconclusive"
    # a 90 % majority class on the target: 0.9 vs 0.8 is what a constant predictor gets, not a win
    majority = {**_results(0.9, 0.8, 0.85, 0.95, (0.1, 2.0)), "target_majority": 0.9}
    verdicts = {c.claim: c.verdict for c in claims(majority)}
    assert verdicts["The merged model beats every single expert on the target domain"] == "fails"
    assert "Target accuracy" in report(
        {**_results(0.9, 0.8, 0.85, 0.95, (0.1, 2.0)), "dataset": "motifs", "target": "mixture", "density": {}}
    )


def _probe(model: MergedGNN) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(3)
    d = int(model.experts[0].in_channels)  # pyright: ignore[reportArgumentType]
    adj = (torch.rand(4, 7, 7, generator=gen) < 0.4).float().triu(1)
    return model(torch.rand(4, 7, d, generator=gen), adj + adj.transpose(1, 2), torch.ones(4, 7, dtype=torch.bool))


def _arms(results: dict) -> list[Arms]:
    """The compared arms of an OGMM result: target accuracy (ours vs every other method), each expert's
    R_bn generated vs random, each expert's own-domain vs cross-domain accuracy, label rate and routing."""
    chance = max(1 / results["num_classes"], results["target_majority"])
    acc = [f"target_accuracy/{k}" for k in results["target_accuracy"] if k != "ogmm"]
    arms = [Arms(ours=["target_accuracy/ogmm"], others=acc, trivial=chance, worse=max(chance - 0.2, 0.0))]
    for i in range(len(results["generation"]["per_expert"])):
        arms.append(
            Arms(
                ours=[f"generation/per_expert/{i}/bn_generated"],
                others=[f"generation/per_expert/{i}/bn_random"],
                trivial=1.0,
            )
        )
    for i in range(len(results["experts"])):
        arms.append(Arms(ours=[f"experts/{i}/in_domain_acc"], others=[f"experts/{i}/cross_domain_acc"], trivial=chance))
    arms.append(Arms(ours=["generation/label_rate"], others=[], trivial=0.5, worse=0.3))
    arms.append(Arms(ours=["routing_own_domain"], others=[], trivial=0.5, worse=0.3))
    return arms


def test_smoke_run_writes_a_valid_run_directory(tmp_path) -> None:
    run, results = smoke_run(METHODS["ogmm"], tmp_path)
    acc = results["target_accuracy"]
    assert {
        "ogmm",
        "gcn-A",
        "gin-B",
        "ens-prob",
        "ens-highconf",
        "uni-soup-gcn",
        "greedy-soup-gin",
        "kd",
        "inverse-gcn",
        "inverse-gin",
    } <= set(acc)
    assert all(0.0 <= v <= 1.0 for v in acc.values())
    assert set(results["topk"]) == {"1", "2"}
    assert results["sizes"]["generated"] == SMOKE.gen_graphs * SMOKE.num_experts
    assert isinstance(OGMMConfig(), OGMMConfig)
    # the merged model is saved and loads back bit for bit (experts, gate and masks)
    assert set(run.saved_models) == {"ogmm"}
    assert_models_roundtrip(run, {"ogmm": _probe})
    # both gates' own-domain mass is recorded
    assert set(results["routing_own_domain_by_gate_input"]) == {"embeddings", "features"}
    # degenerate results: every arm equal, every arm at the trivial answer, ours below it; and our own:
    # a merged model that collapsed to one class (the target's majority share), experts that do not shift
    import copy

    collapsed = copy.deepcopy(results)
    collapsed["target_accuracy"]["ogmm"] = results["target_majority"]
    no_shift = copy.deepcopy(results)
    for e in no_shift["experts"]:
        e["cross_domain_acc"] = e["in_domain_acc"] - 0.05
    assert_no_claim_holds(
        claims,
        results,
        _arms(results),
        extra_cases={"merged model collapsed to the majority class": collapsed, "a shift of 5 points": no_shift},
    )


def test_the_embedding_gate_reads_the_experts_pooled_embeddings() -> None:
    """gate_input="embeddings": the clean gate logits are [h_1; ...; h_M] W_g, with h_j expert j's pooled
    embedding (recomputed here from each expert's embed)."""
    torch.manual_seed(0)
    experts = [DenseExpert(a, 4, 8, 2).eval() for a in ("gcn", "gin")]  # pyright: ignore[reportArgumentType]
    model = MergedGNN(experts, 4, 2).eval()
    with torch.no_grad():
        model.w_gate.normal_()
    x = torch.randn(5, 6, 4)
    adj = (torch.rand(5, 6, 6) < 0.4).float().triu(1)
    adj, mask = adj + adj.transpose(1, 2), torch.ones(5, 6, dtype=torch.bool)
    h = torch.cat([e.embed(x, adj, mask)[0] for e in experts], -1)
    want = (h @ model.w_gate).softmax(-1)
    assert_close(model.gates(x, adj, mask), want, atol=1e-6)


class _UserGCN(torch.nn.Module):
    """A user's sparse PyG graph classifier (GCNConv -> BatchNorm -> ReLU -> mean pool -> linear)."""

    def __init__(self, d: int, h: int, c: int) -> None:
        super().__init__()
        from torch_geometric.nn import GCNConv

        self.conv, self.bn, self.head = GCNConv(d, h), torch.nn.BatchNorm1d(h), torch.nn.Linear(h, c)

    def embed(self, x, edge_index, edge_weight, batch):
        from torch_geometric.nn import global_mean_pool

        return global_mean_pool(self.bn(self.conv(x, edge_index, edge_weight)).relu(), batch)

    def forward(self, data):
        return self.head(self.embed(data.x, data.edge_index, None, data.batch))


def test_pyg_adapter_gives_the_users_model_on_a_list_of_data() -> None:
    """graphs_from_data + PyGExpert on a dense batch reproduce the user's model run by PyG on the same
    graphs (Batch.from_data_list), and the adapter reads the model's BatchNorm input."""
    from torch_geometric.data import Batch
    from torch_geometric.datasets import FakeDataset

    from iclr26_graphs.methods.ogmm import PyGExpert, graphs_from_data

    torch.manual_seed(0)
    graphs = list(FakeDataset(num_graphs=6, avg_num_nodes=8, num_channels=5, num_classes=2, task="graph"))
    net = _UserGCN(5, 8, 2)
    with torch.no_grad():
        net.bn.running_mean.normal_()  # pyright: ignore[reportOptionalMemberAccess]
        net.bn.running_var.uniform_(0.5, 2.0)  # pyright: ignore[reportOptionalMemberAccess]
    net.eval()
    dense = graphs_from_data(graphs)
    assert dense.mask.sum(1).tolist() == [int(g.num_nodes) for g in graphs]  # pyright: ignore[reportArgumentType]
    expert = PyGExpert(net, in_channels=5)
    with torch.no_grad():
        want = net(Batch.from_data_list(graphs))
        got = expert(dense.x, dense.adj, dense.mask)
        pooled, bn_in = expert.embed(dense.x, dense.adj, dense.mask)
    assert_close(got, want, atol=1e-5)
    assert len(bn_in) == 1 and bn_in[0].shape == (int(dense.mask.sum()), 8)
    assert torch.equal(dense.y, torch.tensor([int(g.y) for g in graphs]))
    # a soft adjacency reaches the model through edge_weight: stage 1's gradient flows
    soft = (dense.adj * 0.7).requires_grad_()
    expert(dense.x, soft, dense.mask).sum().backward()
    assert soft.grad is not None and float(soft.grad.abs().sum()) > 0


def test_merge_experts_on_pyg_models_is_data_free(tmp_path) -> None:
    from iclr26_graphs.methods.ogmm import PyGExpert, merge_experts

    torch.manual_seed(0)
    experts = [(f"mine-{i}", PyGExpert(_UserGCN(5, 8, 2).eval(), in_channels=5)) for i in range(2)]
    cfg = dataclasses.replace(SMOKE, gen_graphs=4, gen_nodes=6, gen_epochs=2, merge_epochs=1, top_k=1)
    merged, generated = merge_experts(experts, 2, cfg, seed=0)
    assert len(generated) == 8 and merged.gate_input == "embeddings"
    with pytest.raises(GraphInputError, match="top_k"):
        merge_experts(experts, 2, dataclasses.replace(cfg, top_k=3), seed=0)


def test_dry_run_smoke_builds_and_steps() -> None:
    from iclr26_shared.dryrun import dry_run

    out = dry_run(METHODS["ogmm"], SMOKE, "cpu")
    experts = [DenseExpert(a, out["feature_size"], SMOKE.hidden, 2) for a in SMOKE.archs for _ in "AB"]  # pyright: ignore[reportArgumentType]
    assert out["expert_parameters"] == sum(p.numel() for e in experts for p in e.parameters())
    # stage 2 trains the gate (W_g, W_n over the 4 experts' 16-wide embeddings) and the head masks
    heads = sum(e.head.weight.numel() + e.head.bias.numel() for e in experts)
    assert out["merged_trainable_parameters"] == 2 * (4 * SMOKE.hidden) * 4 + heads
    assert out["train_loss"] > 0


@pytest.mark.slow
def test_dry_run_full_preset() -> None:
    from iclr26_shared.dryrun import dry_run

    out = dry_run(METHODS["ogmm"], PRESETS["full"], "cpu")
    assert out["parameters"] > 0 and out["graphs"]["target"] > 0
