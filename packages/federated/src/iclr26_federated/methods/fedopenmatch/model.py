"""Model and the plain training / evaluation functions of FedOpenMatch (Flower baselines' ``model.py``).

Everything here is framework-free torch, so it can be unit-tested and reused without Flower:

* :func:`train_server` — the server's supervised step on the labelled set D_s:
  ``L_s = (1/N_s) Σ_i [ CE(p_i, y_i) + ℓ_ova(q_i, y_i) ]``;
* :func:`make_pseudo_labels` — the round's frozen pseudo-labels from the received global model;
* :func:`train_client` — a client's local epochs: ``L_m = L_in + L_ova + λ L_cons``, where L_ova uses the
  logit-adjusted OVA logits ``q̃ = q + sign·ω·log π`` (LA);
* :func:`evaluate` — closed-set accuracy and open-set balanced accuracy (OpenMatch inference rule).

Tensor shapes: images ``uint8 [N, H, W(, 3)]``; inlier logits ``p [B, K]``; OVA logits ``q [B, K, 2]``.
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from iclr26_federated.data.augment import normalize, strong_view, weak_view
from iclr26_federated.nn.losses import (
    binary_entropy_loss,
    logit_adjust,
    logit_consistency_loss,
    masked_cross_entropy,
    ova_loss,
    ova_pseudo_label_loss,
    softmax_consistency_loss,
)
from iclr26_federated.nn.metrics import OpenSetMetrics, msp_predict, open_set_metrics, openmatch_predict
from iclr26_federated.nn.models import OpenSetNet, build_model
from iclr26_shared.errors import DataError

if TYPE_CHECKING:
    from iclr26_federated.methods.fedopenmatch.config import JobParams

__all__ = [
    "PseudoLabels",
    "client_loss",
    "evaluate",
    "filter_pseudo_labels",
    "lr_at",
    "make_model",
    "make_pseudo_labels",
    "pseudo_label_stats",
    "server_loss",
    "train_client",
    "train_server",
]


def make_model(params: JobParams, in_channels: int) -> OpenSetNet:
    """The job's network, initialised from its seed (identical on the server and every client); a copy of
    the user's network saved in ``params.model_file`` (:func:`~.api.fit`) when the job names one."""
    if params.model_file:
        return copy.deepcopy(_load_model_file(params.model_file))
    return build_model(params.arch, in_channels, params.known_classes, params.width, seed=params.seed)  # type: ignore[arg-type]


def _load_model_file(path: str) -> OpenSetNet:
    """The ``OpenSetNet`` saved whole (``torch.save(net)``) in ``path``, cached per process by path and
    modification time; a :class:`DataError` naming ``model_file`` otherwise."""
    from pathlib import Path

    try:
        mtime = Path(path).stat().st_mtime_ns
    except OSError:
        raise DataError(f"model_file = {path!r}: no such file") from None
    return _read_model_file(path, mtime)


@functools.lru_cache(maxsize=2)
def _read_model_file(path: str, mtime_ns: int) -> OpenSetNet:
    try:
        # a whole module (pickle): the user's own network classes; only files this process's user wrote
        net = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # unpickling can fail in many ways (a class not importable here, a bad file)
        raise DataError(f"model_file = {path!r} could not be loaded: {type(err).__name__}: {err}") from None
    if not isinstance(net, OpenSetNet):
        raise DataError(f"model_file = {path!r} holds a {type(net).__name__}, expected an OpenSetNet")
    return net


def lr_at(params: JobParams, server_round: int) -> float:
    """FixMatch's cosine decay over the communication rounds: ``η_r = η · cos(7π r / (16 R))``
    (r = 0 for the warm-up; the clients of round r and the server fine-tune after it use η_r)."""
    return params.lr * math.cos(7 * math.pi * server_round / (16 * max(params.num_rounds, 1)))


def _optimizer(model: torch.nn.Module, params: JobParams, lr: float) -> torch.optim.Optimizer:
    return torch.optim.SGD(
        model.parameters(),
        lr=lr,
        momentum=params.momentum,
        weight_decay=params.weight_decay,
        nesterov=params.momentum > 0,
    )


def server_loss(model: OpenSetNet, x: Tensor, y: Tensor, params: JobParams) -> Tensor:
    """``CE(p, y) + ℓ_ova(q, y)`` on a labelled batch ``x [B, C, H, W]`` (OVA term only when ``use_ova``).

    The paper's server loss L_s has no logit adjustment: the hard-negative OVA loss sees one positive and one
    negative per sample, so it is not imbalanced. ``la_on_server`` adds LA here as well (a switch).
    """
    p, q = model(x, gradient_stop=params.gradient_stop)
    loss = F.cross_entropy(p, y)
    if params.use_ova:
        la = params.la_weight if params.la_on_server else 0.0
        loss = loss + ova_loss(logit_adjust(q, la, params.la_sign), y)
    return loss


def train_server(
    model: OpenSetNet,
    images: np.ndarray,
    labels: np.ndarray,
    params: JobParams,
    steps: int,
    gen: torch.Generator,
    device: torch.device | str = "cpu",
    server_round: int = 0,
) -> float:
    """``steps`` SGD steps on random labelled batches (weak views) at the learning rate of
    ``server_round``; returns the mean loss (0 if no step)."""
    if steps <= 0:
        return 0.0
    model.to(device).train()
    opt = _optimizer(model, params, lr_at(params, server_round))
    x_all = torch.from_numpy(images)
    y_all = torch.from_numpy(labels)
    total = 0.0
    for _ in range(steps):
        idx = torch.randint(0, len(y_all), (min(params.batch_size, len(y_all)),), generator=gen)
        x = weak_view(x_all[idx], gen, hflip=params.hflip, device=device)
        loss = server_loss(model, x, y_all[idx].to(device), params)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        total += float(loss.detach())
    return total / steps


@dataclass(frozen=True)
class PseudoLabels:
    """A client's pseudo-labels for one round, made once by the received global model and then frozen.

    Attributes:
        label: ``ŷ = argmax p`` ``[N]``.
        keep: ``[N]`` bool: ``max softmax(p) ≥ τ_in`` and (with the inlier filter) ``σ(q^ŷ)_1 > σ(q^ŷ)_0``.
        ova_pos: ``[N, K]`` bool: ``σ(q^k)_1 ≥ τ_pos``.
        ova_neg: ``[N, K]`` bool: ``σ(q^k)_1 ≤ τ_neg``.
        conf: ``[N]`` ``max softmax(p)`` (diagnostics only; None on a batch slice).
    """

    label: Tensor
    keep: Tensor
    ova_pos: Tensor
    ova_neg: Tensor
    conf: Tensor | None = None


@torch.no_grad()
def make_pseudo_labels(
    model: OpenSetNet, images: np.ndarray, params: JobParams, device: torch.device | str = "cpu", chunk: int = 512
) -> PseudoLabels:
    """Pseudo-labels of the (un-augmented) unlabelled images under the current model (eval mode)."""
    model.to(device).eval()
    ps, qs = [], []
    x_all = torch.from_numpy(images)
    for s in range(0, len(x_all), chunk):
        p, q = model(normalize(x_all[s : s + chunk], device))
        ps.append(p.float().cpu())
        qs.append(q.float().cpu())
    return filter_pseudo_labels(torch.cat(ps), torch.cat(qs), params)


def filter_pseudo_labels(p: Tensor, q: Tensor, params: JobParams) -> PseudoLabels:
    """The pseudo-label rules on logits ``p [N, K]``, ``q [N, K, 2]`` of the received model:

    * FixMatch label ``ŷ = argmax p`` kept iff ``max softmax(p) ≥ τ_in`` and, with ``inlier_filter``, the
      OVA test of ŷ says inlier, ``σ(q^ŷ)_1 > σ(q^ŷ)_0``;
    * OVA pseudo-labels per entry (i, k): positive iff ``σ(q_i^k)_1 ≥ τ_pos``, negative iff ``≤ τ_neg``.
    """
    conf, label = p.softmax(1).max(1)
    s_in = q.softmax(-1)[..., 1]  # [N, K]
    keep = conf >= params.tau_in
    if params.inlier_filter:
        keep &= s_in[torch.arange(len(label)), label] > 0.5
    return PseudoLabels(
        label=label, keep=keep, ova_pos=s_in >= params.tau_pos, ova_neg=s_in <= params.tau_neg, conf=conf
    )


def pseudo_label_stats(pl: PseudoLabels, params: JobParams, true_labels: np.ndarray | None = None) -> dict[str, float]:
    """Diagnostics of one client's round of pseudo-labels (fractions of its N images):

    * ``pl_pass_rate``: kept FixMatch labels (confidence and, with the inlier filter, the OVA test);
    * ``pl_conf_rate``: images whose confidence alone passes τ_in; ``pl_conf``: mean max softmax;
    * with the hidden true labels (analysis only, never trained on; K = unknown): ``pl_correct_rate``
      (kept and right) and ``pl_unknown_rate`` (kept but an unknown-class image). Precision over clients
      is ``Σ correct / Σ pass`` (FedAvg's ``num-examples``-weighted mean keeps these ratios).
    """
    conf = pl.conf if pl.conf is not None else torch.zeros(len(pl.label))
    out = {
        "pl_pass_rate": float(pl.keep.float().mean()),
        "pl_conf_rate": float((conf >= params.tau_in).float().mean()),
        "pl_conf": float(conf.mean()),
    }
    if true_labels is not None:
        y = torch.from_numpy(np.asarray(true_labels)).long()
        out["pl_correct_rate"] = float((pl.keep & (pl.label == y)).float().mean())
        out["pl_unknown_rate"] = float((pl.keep & (y == params.known_classes)).float().mean())
    return out


def client_loss(
    model: OpenSetNet,
    xw: Tensor,
    xs: Tensor,
    pl: PseudoLabels,
    params: JobParams,
    *,
    xw2: Tensor | None = None,
    use_fix: bool = True,
) -> tuple[Tensor, dict[str, float]]:
    """The client objective on one batch of weak ``xw`` and strong ``xs`` views ``[B, C, H, W]``:

    ``L_m = L_in + L_ova + λ·L_cons`` where L_in is FixMatch's CE on the strong view with the frozen
    filtered pseudo-labels (off when ``use_fix`` is False: OpenMatch's start_fix); L_ova is the thresholded
    OVA pseudo-label BCE on the strong view (with LA; ``client_ova = "pseudo"``) or OpenMatch's entropy
    minimisation ``λ_oem·H`` (``"oem"``); L_cons is LCR (raw logits) or SOCR (OVA probabilities) between
    two views: weak vs strong, or, for OpenMatch (``cons_views = "weak-weak"``), two weak views ``xw`` and
    ``xw2`` (OEM then also reads the two weak views). ``pl`` holds the batch's pseudo-labels.
    """
    pw, qw = model(xw, gradient_stop=params.gradient_stop)
    ps, qs = model(xs, gradient_stop=params.gradient_stop)
    if params.cons_views == "weak-weak":
        if xw2 is None:
            raise ValueError("cons_views='weak-weak' needs a second weak view xw2")
        p2, q2 = model(xw2, gradient_stop=params.gradient_stop)
    else:
        p2, q2 = ps, qs
    device = pw.device
    if use_fix:
        l_in = masked_cross_entropy(ps, pl.label.to(device), pl.keep.to(device))
    else:
        l_in = pw.new_zeros(())
    if params.client_ova == "pseudo":
        l_ova = ova_pseudo_label_loss(
            logit_adjust(qs, params.la_weight, params.la_sign), pl.ova_pos.to(device), pl.ova_neg.to(device)
        )
    elif params.client_ova == "oem":
        l_ova = params.oem_weight * 0.5 * (binary_entropy_loss(qw) + binary_entropy_loss(q2))
    else:
        l_ova = pw.new_zeros(())
    if params.consistency == "lcr":
        l_cons = logit_consistency_loss(pw, qw, p2, q2)
    elif params.consistency == "socr":
        l_cons = softmax_consistency_loss(qw, q2)
    else:
        l_cons = pw.new_zeros(())
    loss = l_in + l_ova + params.cons_weight * l_cons
    return loss, {"l_in": float(l_in.detach()), "l_ova": float(l_ova.detach()), "l_cons": float(l_cons.detach())}


def train_client(
    model: OpenSetNet,
    images: np.ndarray,
    params: JobParams,
    gen: torch.Generator,
    device: torch.device | str = "cpu",
    server_round: int = 1,
    true_labels: np.ndarray | None = None,
) -> dict[str, float]:
    """One round of local training on unlabelled ``images``; returns metrics (incl. ``num-examples``).

    Pseudo-labels are computed once from the received model and frozen for all local epochs.
    ``true_labels`` (the hidden labels, for :func:`pseudo_label_stats` only) are never trained on.
    """
    pl = make_pseudo_labels(model, images, params, device)
    use_fix = server_round > params.fix_start
    model.to(device).train()
    opt = _optimizer(model, params, lr_at(params, server_round))
    x_all = torch.from_numpy(images)
    n = len(x_all)
    sums = {"loss": 0.0, "l_in": 0.0, "l_ova": 0.0, "l_cons": 0.0}
    steps = 0
    for _ in range(params.local_epochs):
        order = torch.randperm(n, generator=gen)
        for s in range(0, n, params.batch_size):
            idx = order[s : s + params.batch_size]
            if len(idx) < 2:
                continue
            xw = weak_view(x_all[idx], gen, hflip=params.hflip, device=device)
            xs = strong_view(x_all[idx], gen, hflip=params.hflip, device=device)
            xw2 = None
            if params.cons_views == "weak-weak":
                xw2 = weak_view(x_all[idx], gen, hflip=params.hflip, device=device)
            batch_pl = PseudoLabels(pl.label[idx], pl.keep[idx], pl.ova_pos[idx], pl.ova_neg[idx])
            loss, parts = client_loss(model, xw, xs, batch_pl, params, xw2=xw2, use_fix=use_fix)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sums["loss"] += float(loss.detach())
            for k, v in parts.items():
                sums[k] += v
            steps += 1
    out = {k: v / max(steps, 1) for k, v in sums.items()}
    out |= pseudo_label_stats(pl, params, true_labels)
    out["ova_pos_rate"] = float(pl.ova_pos.any(1).float().mean())
    out["num-examples"] = float(n)
    return out


@torch.no_grad()
def evaluate(
    model: OpenSetNet,
    images: np.ndarray,
    labels: np.ndarray,
    params: JobParams,
    device: torch.device | str = "cpu",
    chunk: int = 512,
) -> OpenSetMetrics:
    """Closed-set accuracy and open-set balanced accuracy on a test set with labels in ``[0, K]``.

    Open-set prediction: the OpenMatch rule (``use_ova``) or max-softmax rejection (FixMatch).
    """
    model.to(device).eval()
    ps, qs = [], []
    x_all = torch.from_numpy(images)
    for s in range(0, len(x_all), chunk):
        p, q = model(normalize(x_all[s : s + chunk], device))
        ps.append(p.float().cpu())
        qs.append(q.float().cpu())
    p, q = torch.cat(ps), torch.cat(qs)
    open_pred = openmatch_predict(p, q) if params.use_ova else msp_predict(p, params.msp_threshold)
    return open_set_metrics(p.argmax(1), open_pred, torch.from_numpy(labels), params.known_classes)
