"""The models of ``causal-delta`` by variant, their losses, one training loop and the evaluation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
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


__all__ = [
    "MODEL_FIELDS",
    "CausalTripletNet",
    "build_model",
    "evaluate",
    "loss_terms",
    "loss_weights",
    "to_tensor",
    "train_variant",
]


#: The config fields that shape a model (what :class:`CausalTripletNet` stores in its ``config.json``).
MODEL_FIELDS = (
    "backbone",
    "cnn_channels",
    "coord_channels",
    "proj_dim",
    "proj_hidden",
    "classifier",
    "top_k",
    "respair_dim",
    "vit_pooling",
    "vit_pixel_norm",
)


def _backbone(arch: dict[str, Any], weights: str = "") -> nn.Module:
    if arch["backbone"] == "resnet18":
        return resnet18_backbone(weights)
    if arch["backbone"] == "vit":
        from iclr26_generative_vision.nn.vit_backbone import load_vit_backbone, vit_backbone_from_config

        kw: dict[str, Any] = {"pooling": arch["vit_pooling"], "pixel_norm": arch["vit_pixel_norm"]}
        if weights:
            return load_vit_backbone(weights, **kw)
        return vit_backbone_from_config(arch["vit_config"], **kw)  # a saved model: weights from its file
    return SmallCNN(tuple(arch["cnn_channels"]), coords=bool(arch["coord_channels"]))


class CausalTripletNet(nn.Module, PyTorchModelHubMixin):
    """A ``causal-delta`` model of one variant, built from JSON values so that it saves and loads through
    ``huggingface_hub.PyTorchModelHubMixin`` (``save_pretrained`` / ``CausalTripletNet.from_pretrained``).

    ``forward(x, x̃)`` is the wrapped network's: CDE (:class:`CausalDeltaModel`, δ = φ(x̃) − φ(x)) or a
    Causal Triplet pair baseline (:class:`PairBaseline`), a dict with ``logits`` ``[B, V]`` and ``delta``.

    Args:
        variant: ``cde``, ``cde-patch``, a CDE ablation, ``vanilla``, ``sms``, ``icm`` or ``pair-concat``.
        num_verbs: V, the action classes.
        num_nouns: The object classes (the ICM critic's output).
        arch: The config's :data:`MODEL_FIELDS` (backbone, widths, head, Top-K, ViT pooling), and for
            ``backbone="vit"`` the checkpoint's ``config.json`` as ``vit_config`` (so a saved model rebuilds
            its ViT without the checkpoint folder).
        backbone_weights: Local ResNet-18 state dict or ViT checkpoint folder for the initial backbone (not
            stored: a saved model's weights are in its safetensors file, and ``from_pretrained`` builds the
            backbone from ``arch`` alone).
    """

    def __init__(
        self, variant: str, num_verbs: int, num_nouns: int, arch: dict[str, Any], backbone_weights: str = ""
    ) -> None:
        super().__init__()
        hub_config = getattr(self, "_hub_mixin_config", None)  # what save_pretrained writes to config.json
        if isinstance(hub_config, dict):
            hub_config["backbone_weights"] = ""
        self.variant = variant
        if variant in ("vanilla", "sms", "icm", "pair-concat"):
            self.net: nn.Module = PairBaseline(
                _backbone(arch, backbone_weights),
                num_verbs,
                head="concat" if variant == "pair-concat" else "respair",
                proj_dim=int(arch["respair_dim"]),
                critic_classes=num_nouns if variant == "icm" else 0,
            )
        else:
            mode = "patch" if variant == "cde-patch" else "global"
            encoder = CausalDeltaEncoder(
                _backbone(arch, backbone_weights), int(arch["proj_dim"]), int(arch["proj_hidden"]), mode
            )
            self.net = CausalDeltaModel(encoder, num_verbs, classifier=arch["classifier"], top_k=int(arch["top_k"]))

    def forward(self, x: Tensor, x_after: Tensor) -> dict[str, Tensor]:
        """The wrapped network's outputs for the pairs ``(x, x̃)`` ``[B, 3, S, S]`` each."""
        return self.net(x, x_after)


def build_model(cfg: CausalDeltaConfig, variant: str, vocab: Vocabulary = MUJOCO_VOCAB) -> CausalTripletNet:
    """A fresh model of ``variant`` (call under ``torch.manual_seed`` for the same initialisation)."""
    arch = {f: list(v) if isinstance(v := getattr(cfg, f), tuple) else v for f in MODEL_FIELDS}
    if cfg.backbone == "vit":
        from iclr26_generative_vision.nn.vit_backbone import read_vit_config

        arch["vit_config"] = read_vit_config(cfg.backbone_weights)
    return CausalTripletNet(variant, len(vocab.verbs), len(vocab.nouns), arch, cfg.backbone_weights)


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
