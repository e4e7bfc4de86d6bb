"""Training ELViS on the user's own descriptors and labelled pairs, without the experiment's harness.

The paper's training (§3, step 5): for labelled image pairs ``(q, x, y)`` (``y = 1``: same instance, the
positive; ``y = 0``: a negative), minimise ``BCE(g(s(q, x)), y)`` with AdamW and a warmup-cosine learning
rate (the experiment's ``train_reranker`` does the same over its triplets, two pairs per anchor).

Two ways to give the pairs:

- :class:`DescriptorPairs`: the user's descriptor tensors ``descriptors [n, N, D]`` (padded, with
  ``masks [n, N]``, True = real descriptor; or a list of ``[N_i, D]`` tensors, padded here) and
  ``pairs [P, 2]`` indices into them with ``labels [P]`` in {0, 1};
- any ``torch.utils.data.Dataset`` whose items are ``(q [M, D], q_mask [M], x [N, D], x_mask [N], label)``
  (lengths may vary between items: :func:`pad_pair_batch` pads each batch).

:func:`train_elvis` runs the loop and returns the per-step losses; the trained :class:`ELViS` saves with
``save_pretrained`` / ``ELViS.from_pretrained`` (``huggingface_hub.PyTorchModelHubMixin``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.utils.data import DataLoader, Dataset

from iclr26_generative_vision.retrieval.elvis import ELViS, check_pair_batch
from iclr26_shared.errors import ConfigError, DataError

__all__ = ["DescriptorPairs", "pad_pair_batch", "train_elvis"]

PairItem = tuple[Tensor, Tensor, Tensor, Tensor, Tensor]


def _pad(descs: Sequence[Tensor]) -> tuple[Tensor, Tensor]:
    n = max(d.shape[0] for d in descs)
    out = descs[0].new_zeros(len(descs), n, descs[0].shape[1])
    mask = torch.zeros(len(descs), n, dtype=torch.bool, device=descs[0].device)
    for i, d in enumerate(descs):
        out[i, : d.shape[0]], mask[i, : d.shape[0]] = d, True
    return out, mask


class DescriptorPairs(Dataset[PairItem]):
    """Labelled pairs over the user's local descriptors.

    Args:
        descriptors: ``[n, N, D]`` float (padded; then ``masks`` is required) or a list of ``[N_i, D]``.
        pairs: ``[P, 2]`` integer indices ``(query, database)`` into ``descriptors``.
        labels: ``[P]`` in {0, 1} (1: a positive pair).
        masks: ``[n, N]`` bool, True where a descriptor is real (with a padded tensor only).
    """

    def __init__(
        self, descriptors: Tensor | Sequence[Tensor], pairs: Tensor, labels: Tensor, *, masks: Tensor | None = None
    ) -> None:
        if isinstance(descriptors, Tensor):
            if descriptors.ndim != 3 or not descriptors.is_floating_point():
                raise DataError(
                    f"descriptors: expected a float tensor [n, N, D], "
                    f"got {tuple(descriptors.shape)} {descriptors.dtype}"
                )
            if masks is None:
                masks = torch.ones(descriptors.shape[:2], dtype=torch.bool, device=descriptors.device)
            if masks.shape != descriptors.shape[:2] or masks.dtype != torch.bool:
                raise DataError(
                    f"masks: expected bool [n, N] = {list(descriptors.shape[:2])}, "
                    f"got {tuple(masks.shape)} {masks.dtype}"
                )
            desc = descriptors
        else:
            if masks is not None:
                raise DataError("masks: only with a padded descriptors tensor (a list is padded here)")
            if not descriptors or any(d.ndim != 2 or d.shape[1] != descriptors[0].shape[1] for d in descriptors):
                raise DataError("descriptors: expected a non-empty list of [N_i, D] tensors with one D")
            desc, masks = _pad(list(descriptors))
        if masks.device != desc.device:
            raise DataError(f"masks is on {masks.device} but descriptors is on {desc.device}")
        n = desc.shape[0]
        if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.is_floating_point():
            raise DataError(f"pairs: expected integer indices [P, 2], got {tuple(pairs.shape)} {pairs.dtype}")
        if pairs.numel() and (int(pairs.min()) < 0 or int(pairs.max()) >= n):
            raise DataError(
                f"pairs: indices must be in [0, {n}) (the number of descriptor sets), "
                f"got {int(pairs.min())}..{int(pairs.max())}"
            )
        if labels.shape != (pairs.shape[0],):
            raise DataError(f"labels: expected [P] = [{pairs.shape[0]}] (one per pair), got {tuple(labels.shape)}")
        if not bool(((labels == 0) | (labels == 1)).all()):
            raise DataError("labels: expected 0 (negative) or 1 (positive) for every pair")
        if not bool(masks.any(1).all()):
            raise DataError("descriptors: every image needs at least one real descriptor (masks has an empty row)")
        self.descriptors, self.masks, self.pairs, self.labels = desc, masks, pairs.long(), labels.float()

    def __len__(self) -> int:
        return self.pairs.shape[0]

    def __getitem__(self, i: int) -> PairItem:
        a, b = (int(v) for v in self.pairs[i])
        return self.descriptors[a], self.masks[a], self.descriptors[b], self.masks[b], self.labels[i]


def pad_pair_batch(items: Sequence[Sequence[Tensor]]) -> PairItem:
    """Stack dataset items into ``(q [B, M, D], q_mask [B, M], x [B, N, D], x_mask [B, N], label [B])``,
    zero-padding each side to its longest item (padding is masked out)."""
    if not items or any(len(it) != 5 for it in items):
        raise DataError("pairs: each dataset item must be (q [M, D], q_mask [M], x [N, D], x_mask [N], label)")
    q, qm = _pad([it[0] for it in items])
    x, xm = _pad([it[2] for it in items])
    for col, mask in ((1, qm), (3, xm)):
        for i, it in enumerate(items):
            m = torch.as_tensor(it[col], dtype=torch.bool)
            if m.shape != (it[col - 1].shape[0],):
                raise DataError(
                    f"pairs: item {i}'s mask is {tuple(m.shape)}, its descriptors {tuple(it[col - 1].shape)}"
                )
            mask[i, : m.shape[0]] = m.to(mask.device)
    label = torch.stack([torch.as_tensor(it[4], dtype=torch.float32) for it in items])
    return q, qm, x, xm, label


def _warmup_cosine(step: int, total: int) -> float:
    warm = max(1, total // 10)
    if step < warm:
        return (step + 1) / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))


def train_elvis(
    model: ELViS,
    pairs: Dataset[Any],
    *,
    epochs: int = 10,
    batch_size: int = 32,
    lr: float = 5e-4,
    weight_decay: float = 5e-4,
    seed: int = 0,
    device: torch.device | str | None = None,
    on_step: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``model`` with BCE on ``g(s)`` over the labelled ``pairs`` (AdamW, warmup-cosine, the paper's
    and the experiment's defaults); returns the per-step losses and leaves the model in eval mode.

    ``pairs``: a :class:`DescriptorPairs` or any dataset of ``(q, q_mask, x, x_mask, label)`` items.
    The order is shuffled by a generator seeded with ``seed`` (the same seed, the same run). ``device``:
    where to train (None: the model's device).
    """
    if not isinstance(model, ELViS):
        raise ConfigError("model", type(model).__name__, "an ELViS (RerankingTransformer needs the harness's globals)")
    for name, value in (("epochs", epochs), ("batch_size", batch_size)):
        if not isinstance(value, int) or value < 1:
            raise ConfigError(name, value, "an integer >= 1")
    if not lr > 0 or weight_decay < 0:
        raise ConfigError(
            "lr" if not lr > 0 else "weight_decay", lr if not lr > 0 else weight_decay, "lr > 0, weight_decay >= 0"
        )
    if len(pairs) == 0:  # type: ignore[arg-type]
        raise DataError("pairs: the dataset is empty")
    dev = torch.device(device) if device is not None else next(model.parameters()).device
    loader = DataLoader(
        pairs,
        batch_size=batch_size,
        shuffle=True,
        collate_fn=pad_pair_batch,
        generator=torch.Generator().manual_seed(seed),
    )
    total = epochs * len(loader)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _warmup_cosine(s, total))
    model.to(dev).train()
    losses: list[float] = []
    for _ in range(epochs):
        for q, qm, x, xm, label in loader:
            q, qm, x, xm, label = (t.to(dev) for t in (q, qm, x, xm, label))
            check_pair_batch(q, qm, x, xm)
            if q.shape[2] != model.in_dim:
                raise DataError(
                    f"pairs: descriptors have width {q.shape[2]}, the model expects in_dim = {model.in_dim}"
                )
            if not q.is_floating_point() or q.dtype != next(model.parameters()).dtype:
                raise DataError(
                    f"pairs: descriptors are {q.dtype}, the model's weights {next(model.parameters()).dtype}"
                )
            loss = F.binary_cross_entropy_with_logits(model.logit(q, qm, x, xm), label)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
            if on_step is not None:
                on_step(len(losses), losses[-1])
    model.eval()
    return losses
