"""OGMM's pipeline: experts on the sources, stage 1 (generation), stage 2 (merging), baselines, evaluation.

Stage 0 trains ``2 × len(archs)`` experts (every architecture on source A and on source B; the two
experts of one architecture start from the same initialisation, as model soups assume). Stages 1 and 2
and every data-free baseline see only the frozen experts and the graphs stage 1 generated:
:func:`generate` and :func:`merge` take no data argument, and the test suite checks that they run with
the data generator disabled. The target domain is used only for the final evaluation.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from iclr26_graphs.data.graph_domains import DenseGraphs, DomainSplit, make_domains
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.methods.ogmm.config import MergeConfig, OGMMConfig
from iclr26_graphs.methods.ogmm.model import (
    DenseExpert,
    GateInput,
    GraphInverter,
    MergedGNN,
    bn_matching_loss,
    cv_squared,
    mask_regulariser,
)
from iclr26_shared.runs import RunDir
from iclr26_shared.seeding import get_rng_state, keeps_global_rng, set_rng_state

__all__ = [
    "Experts",
    "accuracy",
    "ensemble_highconf",
    "ensemble_prob",
    "generate",
    "greedy_soup",
    "inverse_x",
    "kd_student",
    "merge",
    "merge_experts",
    "merged_diagnostics",
    "run",
    "train_expert",
    "uniform_soup",
]

#: (name, model) pairs, e.g. ("gcn-A", expert): DenseExperts or PyGExpert adapters.
Experts = Sequence[tuple[str, Any]]


def _batches(num: int, size: int, gen: torch.Generator | None, shuffle: bool = True) -> list[torch.Tensor]:
    order = torch.randperm(num, generator=gen) if shuffle else torch.arange(num)
    return [order[i : i + size] for i in range(0, num, size)]


@torch.no_grad()
def predict(model: Any, data: DenseGraphs, batch: int = 256) -> torch.Tensor:
    """Logits ``[G, C]`` of ``model(x, adj, mask)`` (the first output when it returns a tuple)."""
    outs = []
    for idx in _batches(len(data), batch, None, shuffle=False):
        out = model(data.x[idx], data.adj[idx], data.mask[idx])
        outs.append(out[0] if isinstance(out, tuple) else out)
    return torch.cat(outs)


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    """Share of ``argmax logits == y``."""
    return float((logits.argmax(-1) == y).float().mean())


@keeps_global_rng
def train_expert(
    arch: str, data: DenseGraphs, num_classes: int, cfg: OGMMConfig, init_seed: int, seed: int
) -> DenseExpert:
    """One expert on one source domain: Adam, cross-entropy, batch 64, ``cfg.expert_epochs`` epochs."""
    torch.manual_seed(init_seed)
    model = DenseExpert(arch, data.x.size(-1), cfg.hidden, num_classes, cfg.layers).to(data.x.device)  # pyright: ignore[reportArgumentType]
    opt = torch.optim.Adam(model.parameters(), lr=cfg.expert_lr, weight_decay=5e-4)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(cfg.expert_epochs):
        for idx in _batches(len(data), 64, gen):
            if idx.numel() < 2:
                continue
            opt.zero_grad()
            F.cross_entropy(model(data.x[idx], data.adj[idx], data.mask[idx]), data.y[idx]).backward()
            opt.step()
    return model.eval()


def _entropy(logits: torch.Tensor) -> torch.Tensor:
    p = logits.softmax(-1)
    return -(p * torch.log(p.clamp(min=1e-12))).sum(-1).mean()


@keeps_global_rng
def generate(expert: Any, num_classes: int, cfg: MergeConfig, seed: int) -> tuple[DenseGraphs, dict[str, float]]:
    """Stage 1 for one frozen expert: ``cfg.gen_graphs`` graphs conditioned on balanced labels ŷ.

    Returns the stored graphs (``X``, ``a > 0.5``; ``y`` = ŷ) and diagnostics: ``label_rate`` (share the
    expert classifies as ŷ, on the stored hard graphs), ``bn_generated`` (R_bn of the stored graphs) and
    ``bn_random`` (R_bn of random graphs with ``X ~ N(0, 1)`` and the same edge density: the reference).
    """
    device = next(expert.parameters()).device
    torch.manual_seed(seed)  # the edge MLP's initialisation (the caller's global state is restored on return)
    gen = torch.Generator().manual_seed(seed)
    expert.eval()
    for p in expert.parameters():
        p.requires_grad_(False)
    y_hat = (torch.arange(cfg.gen_graphs) % num_classes)[torch.randperm(cfg.gen_graphs, generator=gen)].to(device)
    inv = GraphInverter(
        cfg.gen_graphs, cfg.gen_nodes, int(expert.in_channels), cfg.edge_width, gen, feature_map=cfg.feature_map
    ).to(device)
    opt = torch.optim.AdamW(inv.parameters(), lr=cfg.gen_lr)
    mask = torch.ones(cfg.gen_graphs, cfg.gen_nodes, dtype=torch.bool, device=device)
    for _ in range(cfg.gen_epochs):
        x, adj = inv(cfg.tau, gen if device.type == "cpu" else None, hard=cfg.gumbel_hard, sampler=cfg.edge_sampler)
        pooled, bn_in = expert.embed(x, adj, mask)
        logits = expert.head(pooled)
        loss = (
            cfg.lambda_ce * F.cross_entropy(logits, y_hat)
            + cfg.lambda_bn * bn_matching_loss(expert, bn_in, cfg.bn_form)
            + cfg.lambda_conf * _entropy(logits)
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    x, adj = inv.hard_graphs(cfg.store, gen)
    graphs = DenseGraphs(x, adj, mask, y_hat, torch.full_like(y_hat, -1))
    with torch.no_grad():
        pooled, bn_in = expert.embed(x, adj, mask)
        rate = accuracy(expert.head(pooled), y_hat)
        bn_gen = float(bn_matching_loss(expert, bn_in))
        p_edge = float(adj.sum() / (cfg.gen_graphs * cfg.gen_nodes * (cfg.gen_nodes - 1)))
        rx = torch.randn(x.shape, generator=gen).to(device)  # the inverter's starting point, mapped the same way
        rx = rx.softmax(-1) if cfg.feature_map == "softmax" else rx
        ra = (torch.rand(adj.shape, generator=gen) < p_edge).float().triu(1).to(device)
        ra = ra + ra.transpose(1, 2)
        _, bn_rand_in = expert.embed(rx, ra, mask)
        bn_rand = float(bn_matching_loss(expert, bn_rand_in))
    return graphs, {
        "label_rate": rate,
        "bn_generated": bn_gen,
        "bn_random": bn_rand,
        "edge_density": p_edge * (cfg.gen_nodes - 1) / 2,
    }


@keeps_global_rng
def merge(
    experts: Experts,
    generated: DenseGraphs,
    cfg: MergeConfig,
    top_k: int,
    seed: int,
    *,
    gate_input: GateInput | None = None,
) -> MergedGNN:
    """Stage 2: the noisy top-k MoE with head masks, trained on ``generated`` (and nothing else); the gate
    reads ``gate_input`` (default ``cfg.gate_input``).

    Loss (Eq. 20): ``CE(y, Γ) + λ_gate CV²(Σ_batch Gate) + λ_mask (Σ_j CE(y, f_j) + mean_j ‖ω_j − 1‖²)``.
    """
    torch.manual_seed(seed)
    model = MergedGNN(
        [copy.deepcopy(e) for _, e in experts],
        generated.x.size(-1),
        top_k,
        gate_input=gate_input or cfg.gate_input,
        noise_seed=seed,
    ).to(generated.x.device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.merge_lr)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(cfg.merge_epochs):
        for idx in _batches(len(generated), cfg.merge_batch, gen):
            logits, gates, each = model(generated.x[idx], generated.adj[idx], generated.mask[idx])
            y = generated.y[idx]
            r_mask = sum(F.cross_entropy(each[:, j], y) for j in range(each.size(1)))
            close = sum(
                mask_regulariser([w, b], cfg.mask_reg, cfg.mask_t, cfg.mask_eta)
                for w, b in zip(model.mask_w, model.mask_b, strict=True)
            )
            close = close if cfg.mask_reg == "gfma" else close / len(experts)  # GFMA sums over the experts
            loss = (
                F.cross_entropy(logits, y)
                + cfg.lambda_gate * cv_squared(gates.sum(0))
                + cfg.lambda_mask * (r_mask + close)
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


@keeps_global_rng
def merge_experts(
    experts: Experts, num_classes: int, cfg: MergeConfig | None = None, *, seed: int = 0
) -> tuple[MergedGNN, DenseGraphs]:
    """OGMM end to end on the user's own frozen experts, data-free: stage 1 generates ``cfg.gen_graphs``
    graphs from every expert, stage 2 merges them into a :class:`MergedGNN` (``cfg.top_k`` experts per
    graph). Returns the merged model and the generated graphs. ``experts`` are ``(name, model)`` pairs of
    :class:`DenseExpert` s or :class:`~iclr26_graphs.methods.ogmm.adapters.PyGExpert` s. ``cfg`` is a
    :class:`MergeConfig` (OGMM's own settings; an :class:`OGMMConfig` works too); its ``top_k`` is checked
    against these experts (a one-line error naming ``top_k``)."""
    cfg = cfg or MergeConfig()
    if not 1 <= cfg.top_k <= len(experts):
        raise GraphInputError(f"top_k = {cfg.top_k}: expected 1..{len(experts)} (the number of experts)")
    parts = [generate(e, num_classes, cfg, 7919 * seed + j)[0] for j, (_, e) in enumerate(experts)]
    generated = DenseGraphs.cat(parts)
    return merge(experts, generated, cfg, cfg.top_k, seed), generated


@torch.no_grad()
def ensemble_prob(experts: Experts, data: DenseGraphs) -> torch.Tensor:
    """Ens-Prob: mean of the experts' class probabilities ``[G, C]``."""
    return torch.stack([predict(e, data).softmax(-1) for _, e in experts]).mean(0)


@torch.no_grad()
def ensemble_highconf(experts: Experts, data: DenseGraphs) -> torch.Tensor:
    """Ens-HighConf: per graph, the probabilities of the most confident expert ``[G, C]``."""
    probs = torch.stack([predict(e, data).softmax(-1) for _, e in experts])  # [M, G, C]
    best = probs.max(-1).values.argmax(0)  # [G]
    return probs[best, torch.arange(probs.size(1))]


def uniform_soup(models: list[DenseExpert]) -> DenseExpert:
    """Uni-Soup / weight averaging: the parameter and BatchNorm-statistic mean of same-architecture models."""
    soup = copy.deepcopy(models[0])
    states = [m.state_dict() for m in models]
    avg = {
        k: (torch.stack([s[k].float() for s in states]).mean(0).to(v.dtype) if v.is_floating_point() else v)
        for k, v in states[0].items()
    }
    soup.load_state_dict(avg)
    return soup.eval()


def greedy_soup(models: list[DenseExpert], held_out: DenseGraphs) -> tuple[DenseExpert, int]:
    """Greedy-Soup (Wortsman et al. 2022) with the *generated* graphs as the held-out set (data-free):
    models sorted by held-out accuracy are added one by one while the soup's held-out accuracy does not drop.
    Returns the soup and its number of ingredients."""
    scored = sorted(models, key=lambda m: -accuracy(predict(m, held_out), held_out.y))
    chosen = [scored[0]]
    best = accuracy(predict(scored[0], held_out), held_out.y)
    for m in scored[1:]:
        acc = accuracy(predict(uniform_soup([*chosen, m]), held_out), held_out.y)
        if acc >= best:
            chosen.append(m)
            best = acc
    return uniform_soup(chosen), len(chosen)


@keeps_global_rng
def kd_student(experts: Experts, generated: DenseGraphs, cfg: OGMMConfig, arch: str, seed: int) -> DenseExpert:
    """Data-free multi-teacher KD (a Multi-GFKD-style baseline): a fresh expert-shaped student trained on
    the stage-1 graphs to match the teachers' mean tempered probabilities, ``T² KL(p̄_T ‖ p_student,T)``."""
    torch.manual_seed(seed)
    t = cfg.kd_temperature
    with torch.no_grad():
        target = torch.stack([predict(e, generated) / t for _, e in experts]).softmax(-1).mean(0)
    student = DenseExpert(arch, generated.x.size(-1), cfg.hidden, target.size(-1), cfg.layers).to(generated.x.device)  # pyright: ignore[reportArgumentType]
    opt = torch.optim.Adam(student.parameters(), lr=cfg.expert_lr)
    gen = torch.Generator().manual_seed(seed)
    student.train()
    for _ in range(cfg.kd_epochs):
        for idx in _batches(len(generated), 32, gen):
            if idx.numel() < 2:
                continue
            logp = F.log_softmax(student(generated.x[idx], generated.adj[idx], generated.mask[idx]) / t, -1)
            loss = F.kl_div(logp, target[idx], reduction="batchmean") * t * t
            opt.zero_grad()
            loss.backward()
            opt.step()
    return student.eval()


@keeps_global_rng
def inverse_x(generated: DenseGraphs, num_classes: int, cfg: OGMMConfig, arch: str, seed: int) -> DenseExpert:
    """Inverse-X (the paper's model-inversion baseline): inversion without merging. A fresh GNN of
    architecture X is trained from scratch on the pooled stage-1 graphs with their conditioning labels ŷ as
    hard targets, ``CE(ŷ, f_X(X, A))``, under the experts' own schedule (:func:`train_expert`: Adam,
    ``cfg.expert_lr``, batch 64, ``cfg.expert_epochs``). The pre-trained experts enter only through the
    graphs they generated; this is what OGMM's stage 2 (frozen experts, gate, masks) is compared against.
    """
    return train_expert(arch, generated, num_classes, cfg, init_seed=seed, seed=seed)


def _domains(cfg: OGMMConfig, seed: int) -> DomainSplit:
    return make_domains(
        cfg.dataset,
        seed=seed,
        per_domain=cfg.per_domain,
        target_size=cfg.target_size,
        density_a=cfg.density_a,
        density_b=cfg.density_b,
        target=cfg.target,
        nodes=(cfg.min_nodes, cfg.max_nodes),
        max_degree=cfg.max_degree,
    )


@torch.no_grad()
def routing_own_domain(model: MergedGNN, experts: Experts, data: DenseGraphs) -> float | None:
    """Mean gate mass on the experts of each graph's own source domain (graphs with a known domain)."""
    known = data.domain >= 0
    if not bool(known.any()):
        return None
    sub = data.subset(known)
    gates = torch.cat([model.gates(sub.x[i], sub.adj[i], sub.mask[i]) for i in _batches(len(sub), 256, None, False)])
    expert_dom = torch.tensor([0 if n.endswith("-A") else 1 for n, _ in experts], device=gates.device)
    own = expert_dom[None, :] == sub.domain[:, None]
    return float((gates * own).sum(1).mean())


@torch.no_grad()
def merged_diagnostics(model: MergedGNN, data: DenseGraphs) -> dict[str, float]:
    """Where a merged model's accuracy on ``data`` comes from (evaluation only, no randomness):
    ``no_masks`` is its trained gate over the unmasked experts (every ω reset to 1), ``uniform_gate`` the
    mean of its masked experts' logits (the trained masks without the gate)."""
    plain = copy.deepcopy(model)
    for w in [*plain.mask_w, *plain.mask_b]:
        w.fill_(1.0)
    each = torch.cat(
        [model.expert_logits(data.x[i], data.adj[i], data.mask[i]) for i in _batches(len(data), 256, None, False)]
    )
    return {
        "no_masks": accuracy(predict(plain, data), data.y),
        "uniform_gate": accuracy(each.mean(1), data.y),
    }


def steps(cfg: OGMMConfig) -> int:
    """Progress steps of a run: every expert, every expert's generation, the merge, the soups, KD, every
    Inverse-X, every extra top-k merge and the features-gate diagnostic."""
    m = cfg.num_experts
    extra_k = len([k for k in set(cfg.topk_sweep) if k != cfg.top_k])
    return m + m + 1 + 1 + 1 + len(cfg.archs) + extra_k + 1


def run(cfg: OGMMConfig, run: RunDir) -> dict[str, Any]:
    """Stage 0 (experts), stage 1 (generation), stage 2 (merging) and the baselines on the target domain.

    The merged model is saved as ``ogmm`` (``iclr26_shared.load_model(run_dir)``)."""
    device = run.device
    t0 = time.perf_counter()
    data = _domains(cfg, run.seed)
    a_train, b_train = data.a_train.to(device), data.b_train.to(device)
    a_test, b_test, target = data.a_test.to(device), data.b_test.to(device), data.target.to(device)
    experts: Experts = []
    info: list[dict[str, Any]] = []
    ckpt = run.load_checkpoint()
    saved = ckpt[1] if ckpt is not None else {}
    with run.progress(steps(cfg), "ogmm") as bar:
        for i, arch in enumerate(cfg.archs):
            for dom, train_set in (("A", a_train), ("B", b_train)):
                name = f"{arch}-{dom}"
                if name in saved.get("experts", {}):
                    e = DenseExpert(arch, data.num_features, cfg.hidden, data.num_classes, cfg.layers).to(device)
                    e.load_state_dict(saved["experts"][name])
                    e.eval()
                else:
                    e = train_expert(
                        arch, train_set, data.num_classes, cfg, 1000 * run.seed + i, run.seed + len(experts)
                    )
                experts.append((name, e))
                bar.advance(stage=f"expert {name}")
        for name, e in experts:
            in_set, cross_set = (a_test, b_test) if name.endswith("-A") else (b_test, a_test)
            info.append(
                {
                    "name": name,
                    "in_domain_acc": accuracy(predict(e, in_set), in_set.y),
                    "cross_domain_acc": accuracy(predict(e, cross_set), cross_set.y),
                }
            )
        if "experts" in saved:  # resumed after stage 0: its row is in metrics.jsonl already
            if "rng" in saved:  # the global RNG as the uninterrupted run left it after stage 0
                set_rng_state(saved["rng"])
        else:
            run.log(1, stage="experts", **{f"in_{d['name']}": d["in_domain_acc"] for d in info})
            saved = {"experts": {n: e.state_dict() for n, e in experts}, "rng": get_rng_state()}
            run.save_checkpoint(1, saved)
        # ---- stage 1: data-free graph generation, per expert -------------------------------------------
        t1 = time.perf_counter()
        parts: list[DenseGraphs] = []
        gen_stats: list[dict[str, Any]] = []
        for j, (name, e) in enumerate(experts):
            g, stats = generate(e, data.num_classes, cfg, 7919 * run.seed + j)
            g.domain = torch.full_like(g.y, 0 if name.endswith("-A") else 1)  # which expert made it (diagnostic)
            parts.append(g)
            gen_stats.append({"expert": name, **stats})
            bar.advance(stage=f"generate {name}")
        generated = DenseGraphs.cat(parts)
        gen_seconds = time.perf_counter() - t1
        run.log(2, stage="generation", label_rate=sum(s["label_rate"] for s in gen_stats) / len(gen_stats))
        # ---- stage 2 and baselines ----------------------------------------------------------------------
        t2 = time.perf_counter()
        merged = merge(experts, generated, cfg, cfg.top_k, run.seed)
        merge_seconds = time.perf_counter() - t2
        bar.advance(stage="merge")
        acc: dict[str, float] = {"ogmm": accuracy(predict(merged, target), target.y)}
        for name, e in experts:
            acc[name] = accuracy(predict(e, target), target.y)
            next(d for d in info if d["name"] == name)["target_acc"] = acc[name]
        acc["ens-prob"] = accuracy(ensemble_prob(experts, target), target.y)
        acc["ens-highconf"] = accuracy(ensemble_highconf(experts, target), target.y)
        soups: dict[str, int] = {}
        for arch in cfg.archs:
            same: list[DenseExpert] = [e for n, e in experts if n.startswith(f"{arch}-")]  # pyright: ignore[reportAssignmentType]
            acc[f"uni-soup-{arch}"] = accuracy(predict(uniform_soup(same), target), target.y)
            soup, used = greedy_soup(same, generated)
            acc[f"greedy-soup-{arch}"] = accuracy(predict(soup, target), target.y)
            soups[arch] = used
        bar.advance(stage="soups")
        kd_arch = "gin" if "gin" in cfg.archs else cfg.archs[0]
        acc["kd"] = accuracy(predict(kd_student(experts, generated, cfg, kd_arch, run.seed), target), target.y)
        bar.advance(stage="kd")
        for i, arch in enumerate(cfg.archs):
            fresh = inverse_x(generated, data.num_classes, cfg, arch, 1000 * run.seed + 500 + i)
            acc[f"inverse-{arch}"] = accuracy(predict(fresh, target), target.y)
            bar.advance(stage=f"inverse-{arch}")
        topk: dict[str, float] = {}
        for k in sorted(set(cfg.topk_sweep)):  # OGMMConfig rejects any k above the number of experts
            model_k = merged if k == cfg.top_k else merge(experts, generated, cfg, k, run.seed)
            topk[str(k)] = accuracy(predict(model_k, target), target.y)
            if k != cfg.top_k:
                bar.advance(stage=f"top-k {k}")
        routing = routing_own_domain(merged, experts, target)
        # the same merge with the gate on the other input: the own-domain gate mass of both gates
        other: GateInput = "features" if cfg.gate_input == "embeddings" else "embeddings"
        merged_other = merge(experts, generated, cfg, cfg.top_k, run.seed, gate_input=other)
        routing_by_input = {cfg.gate_input: routing, other: routing_own_domain(merged_other, experts, target)}
        acc_by_input = {cfg.gate_input: acc["ogmm"], other: accuracy(predict(merged_other, target), target.y)}
        bar.advance(stage=f"gate on {other}", acc_ogmm=acc["ogmm"])
        diagnostics = merged_diagnostics(merged, target)
        run.log(3, stage="merging", **{f"acc_{k}": v for k, v in acc.items()})
    run.save_model(
        "ogmm",
        merged,
        extra={
            "input": "(x [B, N, d], adj [B, N, N], mask [B, N]) dense graph batch -> (logits, gates, expert logits)",
            "dataset": cfg.dataset,
            "experts": [n for n, _ in experts],
            "target_accuracy": acc["ogmm"],
        },
    )
    return {
        "dataset": cfg.dataset,
        "target": cfg.target,
        "num_classes": data.num_classes,
        "target_majority": float(torch.bincount(data.target.y, minlength=data.num_classes).max()) / len(data.target),
        "num_experts": len(experts),
        "top_k": cfg.top_k,
        "gate_input": cfg.gate_input,
        "sizes": {
            "source_a": len(data.a_train),
            "source_b": len(data.b_train),
            "target": len(data.target),
            "generated": len(generated),
        },
        "density": {
            "source_a": float(data.a_train.density.mean()),
            "source_b": float(data.b_train.density.mean()),
            "target": float(data.target.density.mean()),
            "generated": float(generated.density.mean()),
        },
        "experts": info,
        "target_accuracy": acc,
        "greedy_soup_ingredients": soups,
        "kd_student_arch": kd_arch,
        "generation": {
            "per_expert": gen_stats,
            "label_rate": sum(s["label_rate"] for s in gen_stats) / len(gen_stats),
            "bn_generated": sum(s["bn_generated"] for s in gen_stats) / len(gen_stats),
            "bn_random": sum(s["bn_random"] for s in gen_stats) / len(gen_stats),
            "bn_log_ratio_worst": max(
                math.log10(max(s["bn_generated"], 1e-12) / max(s["bn_random"], 1e-12)) for s in gen_stats
            ),
            "seconds_per_graph": gen_seconds / len(generated),
        },
        "topk": topk,
        "routing_own_domain": routing,
        "routing_own_domain_by_gate_input": routing_by_input,
        "ogmm_accuracy_by_gate_input": acc_by_input,
        "merged_diagnostics": diagnostics,
        "merge_seconds": merge_seconds,
        "wall_seconds": time.perf_counter() - t0,
    }


def dry_run(cfg: OGMMConfig, device: torch.device) -> dict[str, Any]:
    """The preset's data (its first graphs), every expert, one inverter and the merged model at the preset's
    real sizes; one training step of each at batch 2 (expert, stage 1, stage 2) and one evaluation."""
    data = _domains(cfg, 0)
    batch = data.a_train.subset(torch.arange(2)).to(device)
    experts: Experts = []
    losses = []
    for arch in cfg.archs:
        for dom in ("A", "B"):
            e = DenseExpert(arch, data.num_features, cfg.hidden, data.num_classes, cfg.layers).to(device)  # pyright: ignore[reportArgumentType]
            opt = torch.optim.Adam(e.parameters(), lr=cfg.expert_lr, weight_decay=5e-4)
            e.train()
            loss = F.cross_entropy(e(batch.x, batch.adj, batch.mask), batch.y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            experts.append((f"{arch}-{dom}", e.eval()))
    e0: DenseExpert = experts[0][1]
    for p in e0.parameters():
        p.requires_grad_(False)
    inv = GraphInverter(cfg.gen_graphs, cfg.gen_nodes, data.num_features, cfg.edge_width, feature_map=cfg.feature_map)
    inv = inv.to(device)
    opt = torch.optim.AdamW(inv.parameters(), lr=cfg.gen_lr)
    x, adj = inv(cfg.tau, hard=cfg.gumbel_hard)
    gmask = torch.ones(cfg.gen_graphs, cfg.gen_nodes, dtype=torch.bool, device=device)
    pooled, bn_in = e0.embed(x, adj, gmask)
    gen_loss = F.cross_entropy(e0.head(pooled), torch.zeros(cfg.gen_graphs, dtype=torch.long, device=device))
    gen_loss = gen_loss + cfg.lambda_bn * bn_matching_loss(e0, bn_in) + cfg.lambda_conf * _entropy(e0.head(pooled))
    opt.zero_grad()
    gen_loss.backward()
    opt.step()
    model = MergedGNN([e for _, e in experts], data.num_features, cfg.top_k, gate_input=cfg.gate_input).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.merge_lr)
    model.train()
    logits, gates, _ = model(batch.x, batch.adj, batch.mask)
    merge_loss = F.cross_entropy(logits, batch.y) + cfg.lambda_gate * cv_squared(gates.sum(0))
    opt.zero_grad()
    merge_loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        ev = float(F.cross_entropy(model(batch.x, batch.adj, batch.mask)[0], batch.y))
    expert_params = sum(p.numel() for _, e in experts for p in e.parameters())
    return {
        "parameters": expert_params + sum(p.numel() for p in inv.parameters()) + sum(p.numel() for p in params),
        "train_loss": float(merge_loss.detach()),
        "eval_loss": ev,
        "expert_parameters": expert_params,
        "inverter_parameters_per_expert": sum(p.numel() for p in inv.parameters()),
        "merged_trainable_parameters": sum(p.numel() for p in params),
        "expert_losses": losses,
        "generation_loss": float(gen_loss.detach()),
        "graphs": {"source_a": len(data.a_train), "source_b": len(data.b_train), "target": len(data.target)},
        "feature_size": data.num_features,
    }
