"""Claim 1: on the UFM, α_t = |Wᵀ1|²/K follows each of the paper's Theorems 3.1–3.4.

Each simulation uses the real optimizer classes (``torch.optim.SGD``, :class:`~iclr26_theory_metrics.optim.SGDW`,
:class:`~iclr26_theory_metrics.optim.Signum`, :class:`~iclr26_theory_metrics.optim.SignumW`) on the UFM of
:mod:`iclr26_theory_metrics.ufm` and compares α_t with the closed forms there.
"""

from __future__ import annotations

from typing import Any

import torch

from iclr26_theory_metrics.methods.neural_collapse.config import NeuralCollapseConfig
from iclr26_theory_metrics.ufm import (
    sgd_alpha_theory,
    signgd_decoupled_alpha_theory,
    signgd_decoupled_limit,
    simulate_ufm,
)

__all__ = ["max_relative_error", "run_ufm_study"]


def max_relative_error(sim: list[float], theory: list[float], *, floor: float) -> float:
    """max_t |sim_t − theory_t| / theory_t over the steps where theory_t ≥ ``floor`` (below it float64 rounding
    of Wᵀ1, about 1e-16·|W|, dominates)."""
    errs = [abs(s - t) / t for s, t in zip(sim, theory, strict=True) if t >= floor]
    return max(errs) if errs else 0.0


def run_ufm_study(cfg: NeuralCollapseConfig, device: torch.device, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the five UFM simulations; returns ``(results, traces)`` (traces: α_t curves for the plots)."""
    k, steps = cfg.ufm_classes, cfg.ufm_steps
    common = dict(num_classes=k, n_per_class=cfg.ufm_per_class, steps=steps, seed=seed, device=device)
    results: dict[str, Any] = {}
    traces: dict[str, Any] = {}
    for name, coupled in (("sgd", True), ("sgdw", False)):
        tr = simulate_ufm(
            name,
            dim=cfg.ufm_dim,
            lr=cfg.ufm_sgd_lr,
            momentum=cfg.ufm_sgd_momentum,
            weight_decay=cfg.ufm_sgd_wd,
            features="free",
            init_std=0.1,
            **common,
        )
        theory = sgd_alpha_theory(
            tr.alpha[0],
            lr=cfg.ufm_sgd_lr,
            weight_decay=cfg.ufm_sgd_wd,
            momentum=cfg.ufm_sgd_momentum,
            steps=steps,
            coupled=coupled,
        )
        results[name] = {
            "alpha0": tr.alpha[0],
            "alpha_final": tr.alpha[-1],
            "theory_final": theory[-1],
            "decay_ratio": tr.alpha[-1] / tr.alpha[0],
            "max_rel_error": max_relative_error(tr.alpha, theory, floor=1e-16 * tr.alpha[0]),
            "train_acc": tr.accuracy,
        }
        traces[name] = (tr.alpha, theory)
    # Theorem 3.3: SignGD with decoupled WD, features fixed at the ETF, W_0 = 0, p = K
    lr, wd = cfg.ufm_sign_lr, cfg.ufm_sign_wd
    tr = simulate_ufm("signumw", lr=lr, weight_decay=wd, features="etf", init_std=0.0, **common)
    theory = signgd_decoupled_alpha_theory(num_classes=k, lr=lr, weight_decay=wd, steps=steps)
    diffs = [b - a for a, b in zip(tr.alpha[:-1], tr.alpha[1:], strict=True)]
    limit = signgd_decoupled_limit(k, wd)
    results["signumw"] = {
        "alpha_final": tr.alpha[-1],
        "limit": limit,
        "rel_gap_to_limit": abs(tr.alpha[-1] - limit) / limit,
        "max_rel_error": max_relative_error(tr.alpha[1:], theory[1:], floor=1e-300),
        "monotone": all(d >= -1e-12 * limit for d in diffs),
        "train_acc": tr.accuracy,
    }
    traces["signumw"] = (tr.alpha, theory)
    # Theorem 3.4: SignGD with coupled WD from W_0 = 0, constant vs decaying step
    tail = max(1, steps // 10)
    for sched in ("constant", "inverse"):
        tr = simulate_ufm(
            "signum",
            lr=lr,
            weight_decay=wd,
            features="etf",
            init_std=0.0,
            lr_schedule=sched,
            lr_tau=cfg.ufm_lr_tau,
            **common,
        )
        peak = max(tr.alpha)
        results[f"signum_{sched}"] = {
            "alpha_peak": peak,
            "alpha_tail_max": max(tr.alpha[-tail:]),
            "tail_over_peak": max(tr.alpha[-tail:]) / peak if peak > 0 else 0.0,
            "non_monotone": any(b < a for a, b in zip(tr.alpha[:-1], tr.alpha[1:], strict=True)),
            "train_acc": tr.accuracy,
        }
        traces[f"signum_{sched}"] = (tr.alpha, None)
    results["config"] = {"K": k, "sgd_lr": cfg.ufm_sgd_lr, "sgd_wd": cfg.ufm_sgd_wd, "sign_lr": lr, "sign_wd": wd}
    return results, traces
