"""The re-rankers of the ``elvis`` experiment, their triplet training and their pair scores.

Every scorer maps pairs ``(query view, database view)`` to a score that is combined with the global
similarity as ``λ·global + (1 − λ)·σ(τ_scorer · score)`` (paper step 6): ELViS and its ablations use the
paper's τ on ``s`` (or, with ``inference_score="g-logit"``, the calibrated logit ``g(s)`` with τ = 1);
the transformer re-ranker's score is a logit (τ = 1); Chamfer and Chamfer+OT are
normalised by ``M + N`` (their sums, like ELViS's, grow with the descriptor count) and combined linearly;
RANSAC re-ranks by inlier count (ties: global similarity), as classic spatial verification does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr26_generative_vision.data.retrieval import Views
from iclr26_generative_vision.methods.elvis.config import ELViSConfig
from iclr26_generative_vision.retrieval.elvis import (
    Dustbin,
    ELViS,
    chamfer_ot_similarity,
    chamfer_similarity,
    rerank_score,
)
from iclr26_generative_vision.retrieval.rrt import RerankingTransformer
from iclr26_generative_vision.retrieval.verification import ransac_inliers

__all__ = [
    "PairScorer",
    "build_reranker",
    "combine",
    "pair_term",
    "pair_tensors",
    "score_pairs",
    "train_reranker",
    "training_triplets",
]

PairScorer = Callable[[Views, np.ndarray, Views, np.ndarray], np.ndarray]


def build_reranker(cfg: ELViSConfig, variant: str, in_dim: int = 128) -> nn.Module:
    """The network of a trained variant (``elvis*`` or ``rrt``)."""
    if variant == "rrt":
        return RerankingTransformer(
            in_dim, dim=cfg.rrt_dim, layers=cfg.rrt_layers, heads=cfg.rrt_heads, ffn=2 * cfg.rrt_dim, init=cfg.rrt_init
        )
    dustbins: dict[str, Dustbin] = {"elvis-no-dustbin": "none", "elvis-scalar-dustbin": "scalar"}
    return ELViS(
        in_dim,
        dim=cfg.dim,
        f_hidden=cfg.f_hidden,
        g_hidden=cfg.g_hidden,
        dustbin=dustbins.get(variant, "learned"),
        use_f=variant != "elvis-no-f",
        iters=cfg.sinkhorn_iters,
        reg=cfg.sinkhorn_reg,
        g_input=cfg.g_input,
    )


def pair_tensors(
    a: Views, ia: np.ndarray, b: Views, ib: np.ndarray, device: torch.device | None = None
) -> tuple[Tensor, ...]:
    """``(q, q_mask, x, x_mask, q_glob, x_glob)`` tensors of the pairs ``(a[ia[k]], b[ib[k]])``."""

    def t(arr: np.ndarray) -> Tensor:
        return torch.from_numpy(np.ascontiguousarray(arr)).to(device)

    return t(a.desc[ia]), t(a.mask[ia]), t(b.desc[ib]), t(b.mask[ib]), t(a.glob[ia]), t(b.glob[ib])


def _logits(model: nn.Module, batch: tuple[Tensor, ...]) -> Tensor:
    if isinstance(model, ELViS):
        return model.logit(*batch[:4])
    return model(*batch)


def training_triplets(views: Views, pool: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One epoch of triplets over ``views``: every view is an anchor once (shuffled), with a random other view
    of its instance as positive and a random one of its ``pool`` most globally similar other-instance views
    as the (hard) negative. Returns index arrays ``(anchor, positive, negative)``."""
    sim = views.glob @ views.glob.T
    same = views.instance[:, None] == views.instance[None, :]
    anchors = rng.permutation(len(views))
    pos, neg = [], []
    for a in anchors:
        cand = np.nonzero(same[a] & (np.arange(len(views)) != a))[0]
        pos.append(rng.choice(cand))
        others = np.nonzero(~same[a])[0]
        hardest = others[np.argsort(-sim[a, others], kind="stable")[:pool]]
        neg.append(rng.choice(hardest))
    return anchors, np.asarray(pos), np.asarray(neg)


def _warmup_cosine(step: int, total: int) -> float:
    warm = max(1, total // 10)
    if step < warm:
        return (step + 1) / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))


def train_reranker(
    model: nn.Module,
    views: Views,
    cfg: ELViSConfig,
    *,
    seed: int,
    device: torch.device,
    on_step: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Triplet training with BCE on ``g(s)`` (or the transformer's logit): AdamW, warmup-cosine; returns losses.

    The triplets are the same for every variant (they depend only on ``seed``), so the variants see the
    same pairs in the same order; the transformer's epochs and lr are ``cfg.schedule("rrt")`` (with more
    epochs its first ``cfg.epochs`` epochs are ELViS's, then more of the same kind).
    """
    n_epochs, lr = cfg.schedule("rrt" if isinstance(model, RerankingTransformer) else "elvis")
    rng = np.random.default_rng(seed)
    epochs = [training_triplets(views, cfg.hard_negative_pool, rng) for _ in range(n_epochs)]
    steps_per_epoch = math.ceil(len(views) / cfg.batch_size)
    total = n_epochs * steps_per_epoch
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _warmup_cosine(s, total))
    model.to(device).train()
    losses: list[float] = []
    step = 0
    for anchors, pos, neg in epochs:
        for lo in range(0, len(anchors), cfg.batch_size):
            a = anchors[lo : lo + cfg.batch_size]
            ia = np.concatenate([a, a])
            ib = np.concatenate([pos[lo : lo + cfg.batch_size], neg[lo : lo + cfg.batch_size]])
            label = torch.cat([torch.ones(len(a)), torch.zeros(len(a))]).to(device)
            loss = F.binary_cross_entropy_with_logits(_logits(model, pair_tensors(views, ia, views, ib, device)), label)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
            step += 1
            if on_step is not None:
                on_step(step, losses[-1])
    model.eval()
    return losses


def _chunks(n: int, size: int) -> Iterator[slice]:
    for lo in range(0, n, size):
        yield slice(lo, min(n, lo + size))


@torch.no_grad()
def score_pairs(
    name: str,
    model: nn.Module | None,
    a: Views,
    ia: np.ndarray,
    b: Views,
    ib: np.ndarray,
    *,
    cfg: ELViSConfig,
    device: torch.device,
    seed: int = 0,
) -> np.ndarray:
    """Raw pair scores ``[len(ia)]`` of a scorer: ``s`` (ELViS), logit (rrt), normalised Chamfer(+OT) or inliers."""
    if name == "ransac":
        return np.array(
            [
                ransac_inliers(
                    a.desc[i][a.mask[i]], a.xy[i][a.mask[i]], b.desc[j][b.mask[j]], b.xy[j][b.mask[j]], seed=seed
                )
                for i, j in zip(ia, ib, strict=True)
            ],
            dtype=np.float64,
        )
    out: list[np.ndarray] = []
    for sl in _chunks(len(ia), cfg.pair_batch):
        q, qm, x, xm, qg, xg = pair_tensors(a, ia[sl], b, ib[sl], device)
        if name == "chamfer":
            s = chamfer_similarity(q, qm, x, xm) / (qm.sum(1) + xm.sum(1))
        elif name == "chamfer-ot":
            s = chamfer_ot_similarity(q, qm, x, xm, iters=cfg.sinkhorn_iters, reg=cfg.sinkhorn_reg)
            s = s / (qm.sum(1) + xm.sum(1))
        elif isinstance(model, ELViS):
            s = model(q, qm, x, xm)
        elif model is not None:
            s = model(q, qm, x, xm, qg, xg)
        else:
            raise ValueError(f"scorer {name!r} needs a model")
        out.append(s.double().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def pair_term(
    name: str, model: nn.Module | None, raw: np.ndarray, counts: np.ndarray, cfg: ELViSConfig, score: str | None = None
) -> np.ndarray:
    """The pair term a scorer's re-ranking uses: ``g(s)`` for ELViS with ``inference_score="g-logit"`` (``score``
    overrides the config), else the raw score itself. ``counts`` is ``M + N`` per pair."""
    if isinstance(model, ELViS) and (score or cfg.inference_score) == "g-logit":
        with torch.no_grad():
            s = torch.from_numpy(raw).float()
            return model.g_logit(s, torch.from_numpy(counts)).double().cpu().numpy()
    return raw


def combine(
    name: str,
    model: nn.Module | None,
    global_sim: np.ndarray,
    raw: np.ndarray,
    counts: np.ndarray,
    cfg: ELViSConfig,
    *,
    score: str | None = None,
) -> np.ndarray:
    """The re-ranking score of a scorer's raw pair scores (see the module docstring).

    ``counts`` is ``M + N`` per pair; ``score`` overrides ``cfg.inference_score`` for ELViS models.
    """
    if name == "ransac":
        return raw + global_sim  # inliers first; global similarity (in [-1, 1]) breaks ties
    if name in ("chamfer", "chamfer-ot"):
        return cfg.lam * global_sim + (1 - cfg.lam) * raw
    term = torch.from_numpy(pair_term(name, model, raw, counts, cfg, score))
    logit = isinstance(model, ELViS) and (score or cfg.inference_score) == "g-logit"
    tau = 1.0 if name == "rrt" or logit else cfg.tau
    return rerank_score(torch.from_numpy(global_sim), term, lam=cfg.lam, tau=tau).numpy()
