"""The models of ``causal-delta`` by variant, their losses, one training loop and the evaluation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr26_generative_vision.data.causal_triplet import MUJOCO_VOCAB, Vocabulary
from iclr26_generative_vision.methods.causal_delta.config import CausalDeltaConfig
from iclr26_generative_vision.nn.causal_delta import (
    CausalDeltaEncoder,
    CausalDeltaModel,
    PairBaseline,
    SmallCNN,
    block_invariance_loss,
    l1_sparsity,
    resnet18_backbone,
    supcon_loss,
    verb_blocks,
)
from iclr26_shared.distributed import DistContext


def _verb_blocks(vocab: Vocabulary) -> list[int]:
    """SMS blocks: antonym verbs share one (the benchmark's ``verb_block``)."""
    return verb_blocks(len(vocab.verbs), vocab.antonym_ids())


__all__ = ["build_model", "evaluate", "loss_terms", "loss_weights", "to_tensor", "train_variant"]


def _backbone(cfg: CausalDeltaConfig) -> nn.Module:
    if cfg.backbone == "resnet18":
        return resnet18_backbone(cfg.backbone_weights)
    return SmallCNN(cfg.cnn_channels, coords=cfg.coord_channels)


def build_model(cfg: CausalDeltaConfig, variant: str, vocab: Vocabulary = MUJOCO_VOCAB) -> nn.Module:
    """A fresh model of ``variant`` (call under ``torch.manual_seed`` for the same initialisation)."""
    v = len(vocab.verbs)
    if variant in ("vanilla", "sms", "icm", "pair-concat"):
        return PairBaseline(
            _backbone(cfg),
            v,
            head="concat" if variant == "pair-concat" else "respair",
            proj_dim=cfg.respair_dim,
            critic_classes=len(vocab.nouns) if variant == "icm" else 0,
        )
    mode = "patch" if variant == "cde-patch" else "global"
    encoder = CausalDeltaEncoder(_backbone(cfg), cfg.proj_dim, cfg.proj_hidden, mode)
    return CausalDeltaModel(encoder, v, classifier=cfg.classifier, top_k=cfg.top_k)


def loss_weights(cfg: CausalDeltaConfig, variant: str) -> tuple[float, float]:
    """(α_c, α_s) of a CDE variant (the ablations zero one or both; baselines: 0, 0)."""
    if not variant.startswith("cde"):
        return 0.0, 0.0
    ac = 0.0 if variant in ("cde-no-contrast", "cde-ce") else cfg.alpha_contrast
    as_ = 0.0 if variant in ("cde-no-sparse", "cde-ce") else cfg.alpha_sparse
    return ac, as_


def loss_terms(
    cfg: CausalDeltaConfig,
    variant: str,
    out: dict[str, Tensor],
    verbs: Tensor,
    nouns: Tensor,
    vocab: Vocabulary = MUJOCO_VOCAB,
) -> dict[str, Tensor]:
    """The loss of one batch and its terms: ``L = CE + α_c SupCon(δ) + α_s L1(δ)`` (CDE) or the baselines'."""
    terms = {"ce": F.cross_entropy(out["logits"], verbs)}
    ac, as_ = loss_weights(cfg, variant)
    if variant.startswith("cde"):
        if variant == "cde-patch" and cfg.patch_loss == "per-patch":
            patches = out["patches"]  # [B, K, l]: every selected patch carries its pair's action label
            z, labels = patches.reshape(-1, patches.shape[-1]), verbs.repeat_interleave(patches.shape[1])
        else:
            z, labels = out["delta"], verbs
        if ac > 0:
            terms["supcon"] = supcon_loss(z, labels, cfg.temperature)
        if as_ > 0:
            terms["l1"] = l1_sparsity(z, cfg.sparse_reduction)
        terms["loss"] = terms["ce"] + ac * terms.get("supcon", 0.0) + as_ * terms.get("l1", 0.0)
    elif variant == "sms":
        table = _verb_blocks(vocab)
        blocks = torch.tensor(table, device=verbs.device)[verbs]
        terms["sms"] = block_invariance_loss(out["p1"], out["p2"], blocks, max(table) + 1)
        terms["loss"] = terms["ce"] + cfg.sms_weight * terms["sms"]
    elif variant == "icm":
        terms["critic"] = F.cross_entropy(out["critic"], nouns)  # the critic learns; the encoder gets −∇
        terms["loss"] = terms["ce"] + cfg.icm_weight * terms["critic"]
    else:
        terms["loss"] = terms["ce"]
    return terms


def to_tensor(images: np.ndarray, device: torch.device) -> tuple[Tensor, Tensor]:
    """``uint8 [B, 2, S, S, 3]`` → before, after ``float [B, 3, S, S]`` in [−1, 1]."""
    x = torch.from_numpy(images).to(device).permute(0, 1, 4, 2, 3).float().div(127.5).sub(1.0)
    return x[:, 0], x[:, 1]


def train_variant(
    model: nn.Module,
    cfg: CausalDeltaConfig,
    variant: str,
    images: np.ndarray,
    verbs: np.ndarray,
    nouns: np.ndarray,
    *,
    seed: int,
    device: torch.device,
    dist: DistContext | None = None,
    on_step: Callable[[int, dict[str, float]], None] | None = None,
    vocab: Vocabulary = MUJOCO_VOCAB,
) -> list[float]:
    """AdamW over ``epochs`` shuffled passes (the same order for every variant of a seed); returns the losses.

    Under torchrun each rank takes its share of every batch (``DistContext.shard``) and DDP averages
    the gradients; the SupCon term then contrasts within a rank's share.
    """
    dist = dist or DistContext()
    net = dist.wrap(model)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    gen = np.random.default_rng([seed, 29])
    n = len(verbs)
    bs = min(cfg.batch_size, n)
    losses: list[float] = []
    step = 0
    model.train()
    for _ in range(cfg.epochs):
        order = gen.permutation(n)
        for start in range(0, n - bs + 1, bs):  # drop the ragged last batch (SupCon wants full batches)
            idx = dist.shard(order[start : start + bs].tolist())
            x0, x1 = to_tensor(images[idx], device)
            v = torch.from_numpy(verbs[idx]).to(device)
            o = torch.from_numpy(nouns[idx]).to(device)
            terms = loss_terms(cfg, variant, net(x0, x1), v, o, vocab)
            opt.zero_grad(set_to_none=True)
            terms["loss"].backward()
            opt.step()
            step += 1
            vals = dist.mean({k: float(t.detach()) for k, t in terms.items()})
            losses.append(vals["loss"])
            if on_step is not None:
                on_step(step, vals)
    model.eval()
    return losses


@torch.no_grad()
def evaluate(
    model: nn.Module, images: np.ndarray, *, device: torch.device, batch_size: int = 256
) -> tuple[np.ndarray, np.ndarray]:
    """Predicted action ids ``[N]`` and δ ``[N, l]`` of every pair."""
    model.eval()
    preds: list[np.ndarray] = []
    deltas: list[np.ndarray] = []
    for start in range(0, len(images), batch_size):
        x0, x1 = to_tensor(images[start : start + batch_size], device)
        out: dict[str, Any] = model(x0, x1)
        preds.append(out["logits"].argmax(-1).cpu().numpy())
        deltas.append(out["delta"].float().cpu().numpy())
    return np.concatenate(preds), np.concatenate(deltas)
