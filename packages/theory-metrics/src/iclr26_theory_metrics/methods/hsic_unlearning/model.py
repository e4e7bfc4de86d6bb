"""Models, training and the unlearning methods evaluated by ``hsic-unlearning`` (Zhang et al., ICLR 2026, §5).

Every method starts from the original model θ_o (trained on D_train = D_retain ∪ D_forget) except retraining, the
gold standard, which trains a fresh model of the same initialisation on D_retain only. Losses are cross-entropy
on minibatches; tensors are ``x [N, C, H, W]`` images and ``y [N]`` int64 labels.

* ``finetune``: continue training on D_retain (catastrophic forgetting; "FT").
* ``grad-ascent``: gradient *ascent* of the cross-entropy on D_forget ("GA", Thudi et al., 2022).
* ``random-labels``: every epoch, a pass over D_forget with uniformly random wrong labels, then a pass over D_retain
  with the true labels ("RandLabel", Golatkar et al., 2020; the paper's table; the schedule of Fan et al.'s RL code).
* ``l1-sparse``: fine-tune on D_retain with γ_t‖θ‖₁, γ_t decaying linearly from γ to 0 (Jia et al., 2023,
  "Model Sparsity Can Simplify Machine Unlearning").
* ``salun``: random-label training restricted to the weights with the largest |∇_θ L(D_forget)| (a hard saliency
  mask of share ``salun_ratio``; Fan et al., 2024, SalUn).
* ``scrub``: teacher θ_o, student initialised at θ_o; max-steps maximise KL(teacher ‖ student) on D_forget, min-steps
  minimise α·KL + CE on D_retain (Kurmanji et al., 2023, SCRUB), temperature T.

Strengths (issue 38): each method's learning rate and epochs are its own config fields, set to its paper's
setting where that moves our MLP (fine-tune: Jia et al.'s top learning rate; random labels, ℓ1-sparse, SalUn: the
papers' 10 epochs and learning rates) and otherwise to the edge before collapse measured on the quick preset
(gradient ascent and SCRUB, whose papers' learning rates, 1e-4 and 5e-4, leave a memorised MLP unchanged); see the
fields of :class:`~iclr26_theory_metrics.methods.hsic_unlearning.config.HsicUnlearningConfig` for the measurements.
* ``mia-fool``: a method that *only* fools the membership-inference attack: the features are frozen and only the
  linear head is trained so that the sorted per-sample losses on D_forget match the quantiles of the unseen
  reference losses (and the retain loss stays low). It changes no representation, so the split-half dependence
  of the forget set is that of the original model (our stand-in for the paper's "Unroll" row: unlearned by MIA,
  not by the representation).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F

from iclr26_shared.distributed import DistContext
from iclr26_shared.errors import UsageError
from iclr26_theory_metrics.methods.hsic_unlearning.config import HsicUnlearningConfig
from iclr26_theory_metrics.nn.models import FeatureClassifier, build_model

__all__ = [
    "UNLEARN",
    "build_classifier",
    "check_world",
    "minibatches",
    "per_sample_loss",
    "saliency_mask",
    "train_classifier",
    "unlearn",
]

Data = tuple[torch.Tensor, torch.Tensor]


def build_classifier(
    cfg: HsicUnlearningConfig, image_shape: tuple[int, int, int], num_classes: int
) -> FeatureClassifier:
    """The configured classifier (``features(x) [B, p]`` and a linear ``classifier``)."""
    return build_model(cfg.model, image_shape, num_classes, width=cfg.width)


def minibatches(n: int, batch_size: int, gen: torch.Generator) -> Iterator[torch.Tensor]:
    """Shuffled index minibatches ``[≤ batch_size]`` of ``range(n)`` (the last one may be smaller)."""
    order = torch.randperm(n, generator=gen)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def check_world(n: int, batch_size: int, dist: DistContext | None, what: str = "training set") -> None:
    """Under torchrun every minibatch (the last, smaller one included) needs at least one sample per process;
    otherwise a one-line :class:`UsageError` naming ``batch_size``."""
    world = dist.world_size if dist is not None else 1
    last = n % batch_size or batch_size
    if world > 1 and min(batch_size, last) < world:
        raise UsageError(
            f"batch_size: every minibatch needs at least one sample per process (batch {batch_size}, last batch "
            f"{last} of the {n}-image {what}, {world} processes); lower torchrun --nproc-per-node or change "
            "batch_size / n_train"
        )


def train_classifier(
    model: FeatureClassifier,
    data: Data,
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    weight_decay: float,
    gen: torch.Generator,
    dist: DistContext | None = None,
    on_epoch: Callable[[int, float], None] | None = None,
) -> FeatureClassifier:
    """SGD (momentum 0.9, cosine schedule) on the cross-entropy of minibatches of ``batch_size``.

    Under torchrun (``dist`` distributed) the model goes through ``dist.wrap`` (DDP) and every global minibatch
    ``B`` is split over the ranks as ``B[rank::world]`` (uneven shares allowed); each rank's loss is
    ``Σ_{i ∈ share} ℓ_i · world / |B|``, so DDP's gradient average is the single-process gradient of the batch mean
    ``(1/|B|) Σ_{i ∈ B} ℓ_i`` and the run follows the single-process curve up to float summation order. The epoch
    loss passed to ``on_epoch`` is the mean over all ``N`` samples (summed over the ranks). With one process this
    is the plain loop (bit-for-bit what it was).
    """
    x, y = data
    dist = dist if dist is not None else DistContext()
    world = dist.world_size
    check_world(x.shape[0], batch_size, dist)
    net = dist.wrap(model)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    for epoch in range(epochs):
        model.train()
        total, count = 0.0, 0.0
        for idx in minibatches(x.shape[0], batch_size, gen):
            idx = idx.to(x.device)
            if world == 1:
                loss = F.cross_entropy(net(x[idx]), y[idx])
                batch_sum, here = float(loss.detach()) * idx.numel(), idx.numel()
            else:  # this rank's share; sum × world / |B| makes DDP's average the global batch mean
                share = idx[dist.rank :: world]
                summed = F.cross_entropy(net(x[share]), y[share], reduction="sum")
                loss, batch_sum, here = summed * (world / idx.numel()), float(summed.detach()), share.numel()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total, count = total + batch_sum, count + here
        sched.step()
        if on_epoch is not None:
            if world > 1:  # the ratio of the ranks' mean sums is the ratio of the global sums
                sums = dist.mean({"total": total, "count": count})
                total, count = sums["total"], sums["count"]
            on_epoch(epoch + 1, total / max(count, 1))
    model.eval()
    return model


@torch.no_grad()
def per_sample_loss(model: FeatureClassifier, data: Data, batch_size: int) -> torch.Tensor:
    """Cross-entropy of every sample ``[N]`` (the loss attack's score)."""
    model.eval()
    x, y = data
    return torch.cat(
        [
            F.cross_entropy(model(x[s : s + batch_size]), y[s : s + batch_size], reduction="none")
            for s in range(0, x.shape[0], batch_size)
        ]
    )


def _wrong_labels(y: torch.Tensor, num_classes: int, gen: torch.Generator) -> torch.Tensor:
    """Uniform random labels different from ``y``."""
    shift = torch.randint(1, num_classes, y.shape, generator=gen).to(y.device)
    return (y + shift) % num_classes


def _sgd(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def _finetune(model: FeatureClassifier, retain: Data, forget: Data, cfg: HsicUnlearningConfig, ctx: _Ctx) -> None:
    train_classifier(
        model, retain, epochs=cfg.unlearn_epochs, lr=cfg.finetune_lr, batch_size=cfg.batch_size, weight_decay=0.0,
        gen=ctx.gen, dist=ctx.dist,
    )  # fmt: skip


def _grad_ascent(model: FeatureClassifier, retain: Data, forget: Data, cfg: HsicUnlearningConfig, ctx: _Ctx) -> None:
    x, y = forget
    opt = _sgd(model, cfg.ga_lr)
    model.train()
    for _ in range(cfg.ga_epochs):
        for idx in minibatches(x.shape[0], cfg.batch_size, ctx.gen):
            loss = -F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()


def _relabel_train(
    model: FeatureClassifier,
    retain: Data,
    forget: Data,
    cfg: HsicUnlearningConfig,
    ctx: _Ctx,
    lr: float,
    mask: dict[str, torch.Tensor] | None = None,
) -> None:
    """Random wrong labels on D_forget, then D_retain, every epoch: one pass over D_forget with labels drawn
    uniformly among the wrong classes, then one pass over D_retain with the true labels (the schedule of Fan et
    al.'s SalUn code, ``unlearn/RL.py`` for CIFAR-10: forget minibatches first, then every retain minibatch); with
    ``mask`` only the masked weights move (SalUn: the gradients and the momentum are masked, so the other weights
    stay at θ_o)."""
    (xf, yf), (xr, yr) = forget, retain
    opt = _sgd(model, lr)
    model.train()

    def step(loss: torch.Tensor) -> None:
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if mask is not None:
            for name, p in model.named_parameters():
                if p.grad is not None:
                    p.grad.mul_(mask[name])
        opt.step()

    for _ in range(cfg.unlearn_epochs):
        rand = _wrong_labels(yf, ctx.num_classes, ctx.gen)
        for idx in minibatches(xf.shape[0], cfg.batch_size, ctx.gen):
            step(F.cross_entropy(model(xf[idx]), rand[idx]))
        for idx in minibatches(xr.shape[0], cfg.batch_size, ctx.gen):
            step(F.cross_entropy(model(xr[idx]), yr[idx]))


def _random_labels(model: FeatureClassifier, retain: Data, forget: Data, cfg: HsicUnlearningConfig, ctx: _Ctx) -> None:
    _relabel_train(model, retain, forget, cfg, ctx, cfg.random_labels_lr)


def saliency_mask(model: FeatureClassifier, forget: Data, ratio: float, batch_size: int) -> dict[str, torch.Tensor]:
    """SalUn's weight saliency: 1 where |∇_θ L_CE(D_forget)| is among the largest ``ratio`` share of all weights
    (one global threshold), else 0; ``{parameter name: mask}``."""
    x, y = forget
    model.zero_grad(set_to_none=True)
    model.eval()
    for s in range(0, x.shape[0], batch_size):
        F.cross_entropy(model(x[s : s + batch_size]), y[s : s + batch_size], reduction="sum").backward()
    grads = {n: p.grad.abs() if p.grad is not None else torch.zeros_like(p) for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    flat = torch.cat([g.flatten() for g in grads.values()])
    k = max(1, round(ratio * flat.numel()))
    threshold = flat.topk(k).values.min()
    return {n: (g >= threshold).to(g.dtype) for n, g in grads.items()}


def _salun(model: FeatureClassifier, retain: Data, forget: Data, cfg: HsicUnlearningConfig, ctx: _Ctx) -> None:
    mask = saliency_mask(model, forget, cfg.salun_ratio, cfg.eval_batch_size)
    _relabel_train(model, retain, forget, cfg, ctx, cfg.salun_lr, mask=mask)


def _l1_sparse(model: FeatureClassifier, retain: Data, forget: Data, cfg: HsicUnlearningConfig, ctx: _Ctx) -> None:
    x, y = retain
    opt = _sgd(model, cfg.l1_lr)
    steps = cfg.unlearn_epochs * -(-x.shape[0] // cfg.batch_size)
    step = 0
    model.train()
    for _ in range(cfg.unlearn_epochs):
        for idx in minibatches(x.shape[0], cfg.batch_size, ctx.gen):
            gamma = cfg.l1_gamma * (1.0 - step / steps)
            l1 = sum(p.abs().sum() for p in model.parameters())
            loss = F.cross_entropy(model(x[idx]), y[idx]) + gamma * l1
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1


def _kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor, t: float) -> torch.Tensor:
    """KL(teacher ‖ student) of the temperature-softened distributions, × T² (Hinton et al.)."""
    return (
        F.kl_div(
            F.log_softmax(student_logits / t, 1),
            F.log_softmax(teacher_logits / t, 1),
            reduction="batchmean",
            log_target=True,
        )
        * t
        * t
    )


def _scrub(model: FeatureClassifier, retain: Data, forget: Data, cfg: HsicUnlearningConfig, ctx: _Ctx) -> None:
    teacher = copy.deepcopy(model).eval()
    (xf, _), (xr, yr) = forget, retain
    opt = _sgd(model, cfg.scrub_lr)
    t = cfg.scrub_temperature
    for epoch in range(cfg.unlearn_epochs):
        model.train()
        if epoch < cfg.scrub_max_epochs:  # max-steps: move away from the teacher on the forget set
            for idx in minibatches(xf.shape[0], cfg.batch_size, ctx.gen):
                with torch.no_grad():
                    tl = teacher(xf[idx])
                loss = -_kl(model(xf[idx]), tl, t)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        for idx in minibatches(xr.shape[0], cfg.batch_size, ctx.gen):  # min-steps: stay with it on the retain set
            with torch.no_grad():
                tl = teacher(xr[idx])
            out = model(xr[idx])
            loss = cfg.scrub_alpha * _kl(out, tl, t) + F.cross_entropy(out, yr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()


def _mia_fool(model: FeatureClassifier, retain: Data, forget: Data, cfg: HsicUnlearningConfig, ctx: _Ctx) -> None:
    """Head-only loss-quantile matching (features frozen, computed once)."""
    if ctx.unseen_losses is None:
        raise ValueError("mia-fool needs the unseen reference losses")
    with torch.no_grad():
        model.eval()
        hf = torch.cat(
            [
                model.features(forget[0][s : s + cfg.eval_batch_size])
                for s in range(0, forget[0].shape[0], cfg.eval_batch_size)
            ]
        )
        hr = torch.cat(
            [
                model.features(retain[0][s : s + cfg.eval_batch_size])
                for s in range(0, retain[0].shape[0], cfg.eval_batch_size)
            ]
        )
    q = torch.linspace(0, 1, hf.shape[0], dtype=ctx.unseen_losses.dtype)
    target = torch.quantile(ctx.unseen_losses.cpu(), q).to(hf.device, hf.dtype)
    head = model.classifier
    opt = torch.optim.Adam(head.parameters(), lr=cfg.mia_fool_lr)
    for _ in range(cfg.mia_fool_steps):
        lf = F.cross_entropy(head(hf), forget[1], reduction="none").sort().values
        loss = (lf - target).square().mean() + F.cross_entropy(head(hr), retain[1])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


class _Ctx:
    """What the unlearning methods share: the generator, the number of classes, the distributed context (only the
    fine-tune loop is sharded) and the unseen reference losses (MIA-fool's targets)."""

    def __init__(
        self, gen: torch.Generator, num_classes: int, dist: DistContext | None, unseen_losses: torch.Tensor | None
    ) -> None:
        self.gen, self.num_classes, self.dist, self.unseen_losses = gen, num_classes, dist, unseen_losses


#: ``name -> fn(model, retain, forget, cfg, ctx)``: each updates ``model`` (a copy of the original) in place.
UNLEARN: dict[str, Callable[[FeatureClassifier, Data, Data, HsicUnlearningConfig, _Ctx], None]] = {
    "finetune": _finetune,
    "grad-ascent": _grad_ascent,
    "random-labels": _random_labels,
    "l1-sparse": _l1_sparse,
    "salun": _salun,
    "scrub": _scrub,
    "mia-fool": _mia_fool,
}


def unlearn(
    name: str,
    original: FeatureClassifier,
    retain: Data,
    forget: Data,
    cfg: HsicUnlearningConfig,
    *,
    gen: torch.Generator,
    num_classes: int,
    dist: DistContext | None = None,
    unseen_losses: torch.Tensor | None = None,
) -> FeatureClassifier:
    """Apply the unlearning method ``name`` to a copy of ``original``; returns the unlearned model (eval mode)."""
    model = copy.deepcopy(original)
    UNLEARN[name](model, retain, forget, cfg, _Ctx(gen, num_classes, dist, unseen_losses))
    return model.eval()
