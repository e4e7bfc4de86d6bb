"""``run`` of ``elvis``: build the offline benchmark, train the re-rankers on one domain, re-rank every domain.

Steps: (1) the training domain's first ``train_sources`` photographs give the training views (fresh
warps, no queries); its other photographs are the in-domain (ID) test set and every other domain an
out-of-domain (OOD) test set (``data.retrieval``); (2) ELViS, its ablations and the transformer re-ranker
are trained on the same triplets (same seed, same order); (3) every test domain is ranked by the global
descriptor and its top-k shortlist re-ranked by each scorer (global only, Chamfer, Chamfer+OT, RANSAC,
the trained ones); mAP@k Easy (only easy views positive; hard ones ignored), Medium (every view a
positive) and Hard (only hard views; easy ones ignored) as in the revisited Oxford/Paris protocol, and the
mean of Medium and Hard (the headline ``map``, as the official code averages M and H), per domain and as
ID / OOD / average; (4) the controlled check's pair AUC on the ID shortlists;
(5) parameters and µs per pair of each re-ranker at ``max_keypoints`` descriptors.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import torch

from iclr26_generative_vision.data.retrieval import DOMAINS, RetrievalSet, Views, load_sources, make_domain
from iclr26_generative_vision.methods.elvis.config import ELViSConfig
from iclr26_generative_vision.methods.elvis.model import (
    build_reranker,
    combine,
    pair_tensors,
    pair_term,
    score_pairs,
    train_reranker,
)
from iclr26_generative_vision.retrieval.elvis import ELViS, chamfer_ot_similarity
from iclr26_generative_vision.retrieval.metrics import (
    global_ranking,
    junk_last,
    mean_average_precision,
    rerank_order,
)
from iclr26_generative_vision.retrieval.patch_cnn import cnn_describe, train_patch_cnn
from iclr26_shared.bench import measure
from iclr26_shared.errors import ConfigError
from iclr26_shared.runs import RunDir

__all__ = ["build_benchmark", "dinov2_describer", "dry_run", "evaluate_domain", "pair_auc", "run", "time_per_pair"]

ZERO_PARAM = ("chamfer", "chamfer-ot", "ransac")
#: The row of ELViS re-ranked with the paper's σ(τ·s) when the run's inference score is g's logit.
PAPER_SCORE = "elvis-sigmoid-s"


def dinov2_describer(cfg: ELViSConfig) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``descriptor="dinov2"``: the describe function of a view, the backbone from ``dinov2_weights`` and, for
    ``dinov2_select="detector"``, the official detector from ``dinov2_detector`` (local files only)."""
    from iclr26_generative_vision.retrieval.dinov2 import dinov2_describe, load_detector, load_dinov2

    model = load_dinov2(cfg.dinov2_weights)
    detector = None
    if cfg.dinov2_select == "detector":
        detector = load_detector(cfg.dinov2_detector, int(model.config.hidden_size))
    return partial(dinov2_describe, model, max_keypoints=cfg.max_keypoints, select=cfg.dinov2_select, detector=detector)


def build_benchmark(cfg: ELViSConfig, seed: int) -> tuple[Views, dict[str, RetrievalSet]]:
    """The training views and the test sets by domain (the training domain's test set is its ID set).

    With ``descriptor="cnn"`` the patch CNN is first trained on the training photographs only; with
    ``descriptor="dinov2"`` the backbone is loaded from local weights (``dinov2_weights``).
    """
    sources = {d: load_sources(DOMAINS[d], cfg.short_side) for d in cfg.test_domains}
    names = list(sources[cfg.train_domain])
    train_names, id_names = names[: cfg.train_sources], names[cfg.train_sources :]
    if not id_names:
        raise ConfigError("train_sources", cfg.train_sources, f"fewer than the {len(names)} photographs of the domain")

    describe: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None
    if cfg.descriptor == "cnn":
        images = [sources[cfg.train_domain][n] for n in train_names]
        cnn, _ = train_patch_cnn(images, steps=cfg.cnn_steps, seed=seed + 23)
        describe = partial(cnn_describe, cnn, max_keypoints=cfg.max_keypoints)
    elif cfg.descriptor == "dinov2":  # opt-in: local weights only (one DataError line when absent)
        describe = dinov2_describer(cfg)

    def domain(name: str, src: dict[str, np.ndarray], views: int, seed_: int, queries: bool = True) -> RetrievalSet:
        return make_domain(
            name,
            src,
            window=cfg.window,
            out_size=cfg.view_size,
            max_keypoints=cfg.max_keypoints,
            views_per_instance=views,
            seed=seed_,
            include_queries=queries,
            describe=describe,
        )

    train_src = {n: sources[cfg.train_domain][n] for n in train_names}
    train = domain(cfg.train_domain, train_src, cfg.train_views, seed + 17, queries=False).database
    tests: dict[str, RetrievalSet] = {}
    for i, d in enumerate(cfg.test_domains):
        src = {n: sources[d][n] for n in id_names} if d == cfg.train_domain else sources[d]
        tests[d] = domain(d, src, cfg.views_per_instance, seed + 1000 * (i + 1))
    return train, tests


def pair_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """ROC AUC (Mann-Whitney, ties count half) of ``scores`` for boolean ``labels``; NaN without both classes."""
    pos, neg = scores[labels], scores[~labels]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


#: The revisited protocol's splits: (positives, junk) of each, from (all positives, hard, easy).
_PROTOCOLS = ("easy", "medium", "hard")


def evaluate_domain(
    rs: RetrievalSet,
    scorers: dict[str, torch.nn.Module | None],
    cfg: ELViSConfig,
    *,
    device: torch.device,
    seed: int,
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Easy / Medium / Hard mAP@k (official trapezoidal AP; ``*_rect``: rectangular AP) and ``map`` (the mean
    of Medium and Hard) of the global ranking and of every re-ranked one; pair AUCs on the Medium shortlist.

    As the official ``rerank()``, each split re-ranks its own shortlist: the global ranking with that
    split's junk (Easy: the hard positives; Hard: the easy ones) moved behind, then its top k. Every pair
    of any shortlist is scored once."""
    gsim = rs.queries.glob.astype(np.float64) @ rs.database.glob.T.astype(np.float64)
    order = global_ranking(gsim)
    k = min(cfg.rerank_k, order.shape[1])
    nq, ndb = len(rs.queries), len(rs.database)
    pos, hard = rs.positives(), rs.hard_positives()
    easy = pos & ~hard
    split = {"easy": (easy, hard), "medium": (pos, None), "hard": (hard, easy)}
    orders = {p: junk_last(order, split[p][1]) for p in _PROTOCOLS}
    shortlists = {p: orders[p][:, :k] for p in _PROTOCOLS}
    rows = np.repeat(np.arange(nq), k)
    pair_ids = np.unique(np.concatenate([rows * ndb + shortlists[p].reshape(-1) for p in _PROTOCOLS]))
    ia, ib = pair_ids // ndb, pair_ids % ndb

    def lookup(values: np.ndarray, p: str) -> np.ndarray:
        return values[np.searchsorted(pair_ids, rows * ndb + shortlists[p].reshape(-1))].reshape(nq, k)

    def maps(final: np.ndarray | None) -> dict[str, float]:
        out: dict[str, float] = {}
        for p in _PROTOCOLS:
            o = orders[p] if final is None else rerank_order(orders[p], lookup(final, p), k)
            ok, junk = split[p]
            out[p] = mean_average_precision(o, ok, junk=junk, k=cfg.map_k)
            out[f"{p}_rect"] = mean_average_precision(o, ok, junk=junk, k=cfg.map_k, ap="rectangular")
        out["map"] = 0.5 * (out["medium"] + out["hard"])
        out["map_rect"] = 0.5 * (out["medium_rect"] + out["hard_rect"])
        return out

    out = {"global": maps(None)}
    medium_ia, medium_ib = rows, shortlists["medium"].reshape(-1)
    labels = pos[medium_ia, medium_ib]
    aucs = {"global": pair_auc(gsim[medium_ia, medium_ib], labels)}
    counts = (rs.queries.mask.sum(1)[ia] + rs.database.mask.sum(1)[ib]).astype(np.int64)
    for name, model in scorers.items():
        raw = score_pairs(name, model, rs.queries, ia, rs.database, ib, cfg=cfg, device=device, seed=seed)
        out[name] = maps(combine(name, model, gsim[ia, ib], raw, counts, cfg))
        aucs[name] = pair_auc(lookup(pair_term(name, model, raw, counts, cfg), "medium").reshape(-1), labels)
        if name == "elvis" and cfg.inference_score != "sigmoid-s":  # the paper's score on the same model
            out[PAPER_SCORE] = maps(combine(name, model, gsim[ia, ib], raw, counts, cfg, score="sigmoid-s"))
            aucs[PAPER_SCORE] = pair_auc(lookup(raw, "medium").reshape(-1), labels)
    return out, aucs


def time_per_pair(
    model: torch.nn.Module | None, name: str, cfg: ELViSConfig, device: torch.device, in_dim: int = 128
) -> float:
    """Median µs per pair of a scorer on ``timing_pairs`` random pairs with ``max_keypoints`` descriptors each."""
    n, m = cfg.timing_pairs, cfg.max_keypoints
    gen = torch.Generator().manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn(n, m, in_dim, generator=gen), dim=-1).to(device)
    x = torch.nn.functional.normalize(torch.randn(n, m, in_dim, generator=gen), dim=-1).to(device)
    mask = torch.ones(n, m, dtype=torch.bool, device=device)

    def call() -> Any:
        with torch.no_grad():
            if name == "chamfer-ot":
                return chamfer_ot_similarity(q, mask, x, mask, iters=cfg.sinkhorn_iters, reg=cfg.sinkhorn_reg)
            if isinstance(model, ELViS):
                return model(q, mask, x, mask)
            assert model is not None
            return model(q, mask, x, mask, q[:, 0], x[:, 0])

    return measure(call, repeats=5, warmup=1)["median_s"] / n * 1e6


def _summary(per_domain: dict[str, dict[str, dict[str, float]]], cfg: ELViSConfig) -> dict[str, dict[str, float]]:
    scorers = next(iter(per_domain.values())).keys()
    ood = cfg.held_out_domains
    out: dict[str, dict[str, float]] = {}
    for s in scorers:
        out[s] = {
            "id": per_domain[cfg.train_domain][s]["map"],
            "ood": float(np.mean([per_domain[d][s]["map"] for d in ood])),
            "avg": float(np.mean([per_domain[d][s]["map"] for d in per_domain])),
        }
        out[s]["ood_rect"] = float(np.mean([per_domain[d][s]["map_rect"] for d in ood]))  # rectangular AP
        for split in ("easy", "medium", "hard"):  # the revisited protocol's splits, ID and OOD
            out[s][f"id_{split}"] = per_domain[cfg.train_domain][s][split]
            out[s][f"ood_{split}"] = float(np.mean([per_domain[d][s][split] for d in ood]))
    return out


def run(cfg: ELViSConfig, run_dir: RunDir) -> dict[str, Any]:
    """Train the re-rankers and evaluate every scorer on every domain; returns the results."""
    device, seed = run_dir.device, run_dir.seed
    train, tests = build_benchmark(cfg, seed)
    results: dict[str, Any] = {
        "train_domain": cfg.train_domain,
        "held_out_domains": list(cfg.held_out_domains),
        "train": {"views": len(train), "instances": int(len(np.unique(train.instance)))},
        "domains": {
            d: {"queries": len(rs.queries), "database": len(rs.database), "sources": rs.sources}
            for d, rs in tests.items()
        },
        "descriptor": cfg.descriptor,
        "max_keypoints": cfg.max_keypoints,
        "rerank_k": cfg.rerank_k,
        "control_auc": cfg.control_auc,
    }
    models: dict[str, torch.nn.Module] = {}
    ckpt = run_dir.load_checkpoint()
    done: dict[str, Any] = dict(ckpt[1]) if ckpt else {}
    losses: dict[str, list[float]] = {}
    steps = {v: cfg.schedule(v)[0] * -(-len(train) // cfg.batch_size) for v in cfg.variants}
    in_dim = int(train.desc.shape[-1])
    with run_dir.progress(sum(steps.values()), "elvis: train " + ", ".join(cfg.variants)) as bar:
        for i, variant in enumerate(cfg.variants):
            torch.manual_seed(seed)
            model = build_reranker(cfg, variant, in_dim).to(device)
            if variant in done:  # resumed: this variant finished before the run was stopped
                model.load_state_dict(done[variant]["state"])
                losses[variant] = list(done[variant]["losses"])
                bar.advance(steps[variant])
            else:

                def on_step(step: int, loss: float, v: str = variant) -> None:
                    bar.advance(1, loss=loss)
                    if step % 10 == 0:
                        run_dir.log(step, **{f"loss_{v}": loss})

                losses[variant] = train_reranker(model, train, cfg, seed=seed, device=device, on_step=on_step)
                done[variant] = {"state": model.state_dict(), "losses": losses[variant]}
                run_dir.save_checkpoint(i + 1, done)
            models[variant] = model.eval()
            run_dir.save_model(variant, model, extra={"descriptor": cfg.descriptor, "in_dim": in_dim})
    results["losses"] = {
        v: {"first": ls[0], "last": ls[-1], "steps": len(ls), "epochs": cfg.schedule(v)[0], "lr": cfg.schedule(v)[1]}
        for v, ls in losses.items()
    }
    scorers: dict[str, torch.nn.Module | None] = {**dict.fromkeys(ZERO_PARAM), **models}
    per_domain: dict[str, dict[str, dict[str, float]]] = {}
    aucs: dict[str, dict[str, float]] = {}
    chance: dict[str, float] = {}
    with run_dir.progress(len(tests), "elvis: re-rank") as bar:
        for d, rs in tests.items():
            per_domain[d], aucs[d] = evaluate_domain(rs, scorers, cfg, device=device, seed=seed)
            pos = rs.positives()
            chance[d] = float((pos.sum(1) / pos.shape[1]).mean())  # ≈ AP of a random ranking
            bar.advance(1, **{"elvis_map": per_domain[d]["elvis"]["map"]})
    results["map"] = per_domain
    results["summary"] = _summary(per_domain, cfg)
    results["chance_map"] = {
        "id": chance[cfg.train_domain],
        "ood": float(np.mean([chance[d] for d in cfg.held_out_domains])),
        "avg": float(np.mean(list(chance.values()))),
    }
    results["pair_auc"] = aucs
    cost: dict[str, dict[str, float]] = {
        "chamfer-ot": {"params": 0, "us_per_pair": time_per_pair(None, "chamfer-ot", cfg, device, in_dim)}
    }
    for v, m in models.items():
        params = m.num_inference_parameters() if isinstance(m, ELViS) else sum(p.numel() for p in m.parameters())
        cost[v] = {"params": int(params), "us_per_pair": time_per_pair(m, v, cfg, device, in_dim)}
    results["cost"] = cost
    if run_dir.dist.is_main:
        _plots(results, run_dir)
    return results


def _plots(results: dict[str, Any], run_dir: RunDir) -> None:
    from iclr26_shared.plotting import plot_bars

    summary = results["summary"]
    for split in ("id", "ood", "avg"):
        plot_bars(
            run_dir.figure_path(f"map_{split}"),
            {s: v[split] for s, v in summary.items()},
            ylabel=f"mAP@{results['rerank_k']} (M+H)/2",
            title=f"{split.upper()} mAP by re-ranker",
        )


def dry_run(cfg: ELViSConfig, device: torch.device) -> dict[str, Any]:
    """ELViS and the transformer re-ranker at the preset's real sizes, on SIFT views of two training-domain
    photographs (the preset's window, view size and descriptor count): one AdamW step of the BCE on a
    positive and a negative pair each, then their pair scores at batch 2;
    ``{"parameters", "train_loss", "eval_score"}`` summed over the trained variants."""
    from iclr26_generative_vision.methods.elvis.model import _logits  # pyright: ignore[reportPrivateUsage]

    names = tuple(DOMAINS[cfg.train_domain][:2])
    views = make_domain(
        cfg.train_domain,
        load_sources(names, cfg.short_side),
        window=cfg.window,
        out_size=cfg.view_size,
        max_keypoints=cfg.max_keypoints,
        views_per_instance=2,
        seed=0,
        include_queries=False,
    ).database
    if len(np.unique(views.instance)) < 2 or np.bincount(views.instance).max() < 2:
        raise ConfigError("window", cfg.window, f"a window that gives two instances of {names} with two views")
    in_dim = int(views.desc.shape[-1])
    same = np.flatnonzero(views.instance == views.instance[0])
    other = np.flatnonzero(views.instance != views.instance[0])
    ia, ib = np.array([same[0], same[0]]), np.array([same[1], other[0]])
    label = torch.tensor([1.0, 0.0], device=device)
    params, train_loss, eval_score = 0, 0.0, 0.0
    for variant in [v for v in cfg.variants if v == "rrt" or v.startswith("elvis")]:
        torch.manual_seed(0)
        model = build_reranker(cfg, variant, in_dim).to(device).train()
        trainable = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(trainable, lr=cfg.schedule(variant)[1], weight_decay=cfg.weight_decay)
        batch = pair_tensors(views, ia, views, ib, device)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(_logits(model, batch), label)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            eval_score += float(_logits(model, batch).mean())
        params += sum(p.numel() for p in trainable)
        train_loss += float(loss.detach())
    return {"parameters": params, "train_loss": train_loss, "eval_score": eval_score}
