"""The split-half decision protocol of Zhang et al. (ICLR 2026, §3.2) with common random numbers and Monte-Carlo
intervals, and :func:`evaluate_unlearning`, the method applied to a reader's own model and data.

Common random numbers. Every random draw of the protocol is *keyed* by what it is for (the experiment, the
protocol draw r, the role and the index of the subset), never by the order of the calls: a subset's indices, its
split S₁/S₂ and the shuffles of S₂ come from a generator seeded by ``(seed, key)``. So every model under evaluation
is judged on the same target subsets, the same reference subsets, the same splits and the same shuffles, and the
difference of two models' OTRs carries no protocol noise that is not common to both. (Before issue 38 one generator
advanced across the models, so models were judged on different subsets and shuffles.)

Monte-Carlo interval. One *protocol draw* r draws fresh references S_IT, S_OOT (``reference_subsets`` each) and
``n_targets`` target subsets; within a draw the targets share the references, so their decisions are strongly
correlated and a draw is the independent unit. OTR (or F1) is computed per draw; ``protocol_draws`` draws give
the mean and its 95% Student-t interval over draws (:func:`mc_interval`), which the claims fold into their margins
(a verdict holds only beyond the protocol's own noise). Shapes: features ``[N, d]`` float64; H distributions
``[n_shuffles]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import torch

from iclr26_shared.errors import UsageError
from iclr26_shared.verdicts import t_interval
from iclr26_theory_metrics.methods.hsic_unlearning.config import HsicUnlearningConfig
from iclr26_theory_metrics.ops.hsic import classify_subset, split_half_dependence
from iclr26_theory_metrics.ops.hsic_null import split_half_gamma

__all__ = [
    "EXP_CONTROL",
    "EXP_F1",
    "EXP_FORGET_UNSEEN",
    "EXP_OTR",
    "Protocol",
    "collect_features",
    "compare_unlearning",
    "disjoint_subsets",
    "evaluate_unlearning",
    "mc_interval",
    "otr_study",
    "reference_subsets",
    "random_subsets",
]

#: Experiment keys of the common-random-number generators.
EXP_OTR, EXP_F1, EXP_FORGET_UNSEEN, EXP_CONTROL = 1, 2, 3, 4
#: Roles of a subset within a draw.
_IT_REF, _OOT_REF, _TARGET, _IN, _OUT = 0, 1, 2, 3, 4


def mc_interval(values: Sequence[float]) -> list[float]:
    """``[mean, low, high]``: the mean of per-draw values (rates in [0, 1]: OTR, F1) and its 95% Student-t interval
    over the draws, clipped to [0, 1]."""
    lo, hi = t_interval(list(values))
    return [float(np.mean(values)), max(lo, 0.0), min(hi, 1.0)]


class Protocol:
    """The split-half decision protocol with the config's settings and keyed (common) random numbers."""

    def __init__(self, cfg: HsicUnlearningConfig, seed: int) -> None:
        self.cfg, self.seed = cfg, int(seed)
        self.decisions = self.ties = 0  # counters: how many decisions a tie settled (a diagnostic)

    def generator(self, *key: int) -> torch.Generator:
        """A fresh generator seeded by ``(seed, *key)`` (numpy's SeedSequence: distinct keys, independent
        streams); the same key gives the same draws whatever was drawn before."""
        state = np.random.SeedSequence([self.seed, *key]).generate_state(1, np.uint64)[0]
        return torch.Generator().manual_seed(int(state) >> 1)

    def dependence(self, feats: torch.Tensor, idx: torch.Tensor, key: Sequence[int]) -> torch.Tensor:
        """H(S, h) over ``n_shuffles`` shuffles ``[B]`` for the subset ``idx`` of the rows ``feats [N, d]``, the split
        and shuffles keyed by ``key`` (so the same for every model); with ``null="gamma"`` the moment-matched Gamma's
        ``n_shuffles`` quantiles for the same keyed split instead of the shuffles."""
        c = self.cfg
        if c.null == "gamma":
            return split_half_gamma(
                feats, idx, c.n_shuffles, kernel=c.kernel, sigma=c.sigma, generator=self.generator(*key)
            )
        return split_half_dependence(
            feats, idx, c.n_shuffles, kernel=c.kernel, sigma=c.sigma, resplit=c.resplit, generator=self.generator(*key)
        )

    def references(
        self,
        it_feats: torch.Tensor,
        it_idx: Sequence[torch.Tensor],
        oot_feats: torch.Tensor,
        oot_idx: Sequence[torch.Tensor],
        key: Sequence[int],
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """H(S_IT) and H(S_OOT), each pooled over the reference subsets."""
        return (
            torch.cat([self.dependence(it_feats, i, (*key, _IT_REF, j)) for j, i in enumerate(it_idx)]),
            torch.cat([self.dependence(oot_feats, i, (*key, _OOT_REF, j)) for j, i in enumerate(oot_idx)]),
        )

    def is_out_of_training(
        self, target: torch.Tensor, refs: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[bool, float, float]:
        """``(out of training?, JSD to IT, JSD to OOT)`` of one target distribution."""
        d = classify_subset(
            target, refs[0], refs[1], bins=self.cfg.jsd_bins, rule=self.cfg.decision, tie_break=self.cfg.tie_break
        )
        self.decisions += 1
        self.ties += int(d.tied)
        return d.out_of_training, d.jsd_it, d.jsd_oot


def random_subsets(pool: int, size: int, count: int, gen: torch.Generator) -> list[torch.Tensor]:
    """``count`` random subsets (without replacement within a subset) of ``range(pool)``."""
    return [torch.randperm(pool, generator=gen)[:size] for _ in range(count)]


def disjoint_subsets(pool: int, size: int, count: int, gen: torch.Generator) -> tuple[list[torch.Tensor], torch.Tensor]:
    """``count`` disjoint subsets of ``range(pool)`` and the remaining indices."""
    perm = torch.randperm(pool, generator=gen)
    return [perm[i * size : (i + 1) * size] for i in range(count)], perm[count * size :]


def reference_subsets(pool: int, size: int, cfg: HsicUnlearningConfig, gen: torch.Generator) -> list[torch.Tensor]:
    """``cfg.reference_subsets`` reference subsets of ``range(pool)``: disjoint, or independent draws that may share
    indices with ``cfg.reference_overlap``."""
    if cfg.reference_overlap:
        return random_subsets(pool, size, cfg.reference_subsets, gen)
    return disjoint_subsets(pool, size, cfg.reference_subsets, gen)[0]


def otr_study(proto: Protocol, forget: torch.Tensor, retain: torch.Tensor, reference: torch.Tensor) -> dict[str, Any]:
    """The out-of-training rate of forget subsets: per protocol draw r, ``reference_subsets`` S_IT ⊂ ``retain`` and
    S_OOT ⊂ ``reference`` and ``n_targets`` targets ⊂ ``forget`` (features ``[N, d]``, keyed draws), OTR_r = the share
    of targets judged out of training; returns ``otr`` (mean over draws), ``otr_ci`` (95% MC interval),
    ``otr_draws``, the mean JSDs and mean H of the targets and references (over every draw) and ``tie_share``, the
    share of decisions that a tie of the rule left to ``tie_break``."""
    cfg = proto.cfg
    size, otrs, j_it, j_oot, h_tar, h_it, h_oot = cfg.subset_size, [], [], [], [], [], []
    n0, t0 = proto.decisions, proto.ties
    for r in range(cfg.protocol_draws):
        gen = proto.generator(EXP_OTR, r)
        it_refs = reference_subsets(retain.shape[0], size, cfg, gen)
        oot_refs = reference_subsets(reference.shape[0], size, cfg, gen)
        targets = random_subsets(forget.shape[0], size, cfg.n_targets, gen)
        refs = proto.references(retain, it_refs, reference, oot_refs, (EXP_OTR, r))
        h_it.append(float(refs[0].mean()))
        h_oot.append(float(refs[1].mean()))
        out = 0
        for t, idx in enumerate(targets):
            h = proto.dependence(forget, idx, (EXP_OTR, r, _TARGET, t))
            oot, a, b = proto.is_out_of_training(h, refs)
            out += int(oot)
            j_it.append(a)
            j_oot.append(b)
            h_tar.append(float(h.mean()))
        otrs.append(out / cfg.n_targets)
    mean, lo, hi = mc_interval(otrs)
    return {
        "otr": mean,
        "otr_ci": [lo, hi],
        "otr_draws": otrs,
        "mean_jsd_it": float(np.mean(j_it)),
        "mean_jsd_oot": float(np.mean(j_oot)),
        "mean_h_forget": float(np.mean(h_tar)),
        "mean_h_it_ref": float(np.mean(h_it)),
        "mean_h_oot_ref": float(np.mean(h_oot)),
        "tie_share": (proto.ties - t0) / max(proto.decisions - n0, 1),
    }


def _batches(data: torch.Tensor | Iterable[Any]) -> Iterable[torch.Tensor]:
    if isinstance(data, torch.Tensor):
        yield data
        return
    for batch in data:
        x = batch[0] if isinstance(batch, list | tuple) else batch
        if not isinstance(x, torch.Tensor):
            raise UsageError(f"data: a batch must be a tensor or a (tensor, ...) tuple, got {type(x).__name__}")
        yield x


@torch.no_grad()
def collect_features(
    feature_fn: Callable[[torch.Tensor], torch.Tensor] | torch.nn.Module,
    data: torch.Tensor | Iterable[Any],
    *,
    batch_size: int = 1000,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """The representation ``[N, d]`` (float64, CPU) of ``data``: a tensor of inputs ``[N, ...]`` (passed in
    batches of ``batch_size``) or an iterable of batches (a DataLoader; a batch may be ``(x, y, ...)``: its first
    element is the input). ``feature_fn`` is any callable or ``nn.Module`` (put in eval mode for the pass and
    restored after); its output is flattened per sample."""
    module = feature_fn if isinstance(feature_fn, torch.nn.Module) else getattr(feature_fn, "__self__", None)
    was = module.training if isinstance(module, torch.nn.Module) else None
    if isinstance(module, torch.nn.Module):
        module.eval()
    try:
        out = []
        for xb in _batches(data):
            for s in range(0, xb.shape[0], batch_size):
                chunk = xb[s : s + batch_size]
                h = feature_fn(chunk.to(device) if device is not None else chunk)
                if not isinstance(h, torch.Tensor):
                    raise UsageError(f"feature_fn: must return a tensor, got {type(h).__name__}")
                out.append(h.detach().flatten(1).double().cpu())
    finally:
        if isinstance(module, torch.nn.Module) and was is not None:
            module.train(was)
    if not out:
        raise UsageError("data: no samples")
    return torch.cat(out)


def evaluate_unlearning(
    feature_fn: Callable[[torch.Tensor], torch.Tensor] | torch.nn.Module,
    forget: torch.Tensor | Iterable[Any],
    retain: torch.Tensor | Iterable[Any],
    test: torch.Tensor | Iterable[Any],
    *,
    subset_size: int = 400,
    n_targets: int = 10,
    protocol_draws: int = 8,
    n_shuffles: int = 200,
    seed: int = 0,
    device: torch.device | str | None = None,
    **protocol: Any,
) -> dict[str, Any]:
    """Split-half HSIC unlearning evaluation of a model on its forget set (Zhang et al., ICLR 2026).

    ``feature_fn`` maps inputs to the representation h (a model, ``model.features``, any callable); ``forget``,
    ``retain`` and ``test`` are input tensors ``[N, ...]`` or DataLoaders (never seen: ``test``). Returns
    ``otr`` (the share of forget subsets judged *out of training*: high = unlearned, like a model retrained
    without them), ``otr_ci`` (its 95% Monte-Carlo interval over ``protocol_draws`` protocol draws), ``otr_draws``
    and the mean JSDs / H levels. ``protocol`` takes the other protocol fields of
    :class:`~iclr26_theory_metrics.methods.hsic_unlearning.config.HsicUnlearningConfig` (``kernel``, ``sigma``,
    ``decision``, ``tie_break``, ``jsd_bins``, ``reference_subsets``, ``reference_overlap``, ``resplit``,
    ``null``). The draws are keyed by ``seed`` alone, so two models evaluated with the same seed and data sizes are
    judged on the same subsets, splits, shuffles and references (common random numbers): compare them draw by
    draw."""
    allowed = {
        "kernel",
        "sigma",
        "decision",
        "tie_break",
        "jsd_bins",
        "reference_subsets",
        "reference_overlap",
        "resplit",
        "null",
    }
    unknown = set(protocol) - allowed
    if unknown:
        raise UsageError(
            f"evaluate_unlearning: unknown protocol option(s) {sorted(unknown)}; expected {sorted(allowed)}"
        )
    cfg = dataclasses.replace(
        HsicUnlearningConfig(),
        subset_size=subset_size,
        f1_subset_sizes=(subset_size,),
        n_targets=n_targets,
        protocol_draws=protocol_draws,
        n_shuffles=n_shuffles,
        **protocol,
    )
    f_forget, f_retain, f_test = (collect_features(feature_fn, d, device=device) for d in (forget, retain, test))
    refs = 1 if cfg.reference_overlap else cfg.reference_subsets
    for name, n, need in (
        ("forget", f_forget.shape[0], subset_size),
        ("retain", f_retain.shape[0], refs * subset_size),
        ("test", f_test.shape[0], refs * subset_size),
    ):
        if n < need:
            raise UsageError(f"{name}: {n} samples, need at least {need} for subsets of subset_size = {subset_size}")
    out = otr_study(Protocol(cfg, seed), f_forget, f_retain, f_test)
    return {**out, "subset_size": subset_size, "n_targets": n_targets, "protocol_draws": protocol_draws}


def _paired(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """Per-draw differences ``a − b`` of two OTR series judged on the same draws, their mean and 95% t-interval."""
    diffs = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    lo, hi = t_interval(diffs)
    return {"mean": float(np.mean(diffs)), "ci": [lo, hi], "draws": diffs}


def compare_unlearning(
    original: Callable[[torch.Tensor], torch.Tensor] | torch.nn.Module,
    unlearned: Callable[[torch.Tensor], torch.Tensor] | torch.nn.Module,
    forget: torch.Tensor | Iterable[Any],
    retain: torch.Tensor | Iterable[Any],
    test: torch.Tensor | Iterable[Any],
    *,
    retrained: Callable[[torch.Tensor], torch.Tensor] | torch.nn.Module | None = None,
    seed: int = 0,
    **options: Any,
) -> dict[str, Any]:
    """Evaluate an unlearning method on the user's own models: the ``original`` model, the ``unlearned`` one and,
    optionally, one ``retrained`` without the forget set (each a feature map: a model, ``model.features``, any
    callable), on the same ``forget``, ``retain`` and never-seen ``test`` inputs (tensors or DataLoaders).

    Every model is judged by :func:`evaluate_unlearning` with the same ``seed`` and ``options`` (``subset_size``,
    ``n_targets``, ``protocol_draws``, ``n_shuffles``, ``device`` and the protocol fields), hence on the same
    subsets, splits, shuffles and references (common random numbers), so the comparisons are paired draw by draw.
    Returns ``{"original", "unlearned", "retrained"}`` (each :func:`evaluate_unlearning`'s dict, ``retrained``
    None when not given), ``"forgetting"``: OTR(unlearned) − OTR(original) per draw with its mean and 95%
    t-interval (> 0: the forget set looks less seen after unlearning), and, with ``retrained``,
    ``"gap_to_retrained"``: OTR(unlearned) − OTR(retrained) likewise (0: as forgotten as the gold standard)."""
    out: dict[str, Any] = {
        "original": evaluate_unlearning(original, forget, retain, test, seed=seed, **options),
        "unlearned": evaluate_unlearning(unlearned, forget, retain, test, seed=seed, **options),
        "retrained": None,
    }
    out["forgetting"] = _paired(out["unlearned"]["otr_draws"], out["original"]["otr_draws"])
    if retrained is not None:
        out["retrained"] = evaluate_unlearning(retrained, forget, retain, test, seed=seed, **options)
        out["gap_to_retrained"] = _paired(out["unlearned"]["otr_draws"], out["retrained"]["otr_draws"])
    return out
