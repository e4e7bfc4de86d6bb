"""Expand a :class:`NeuralCollapseConfig` into the list of training runs (light: no torch import)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from iclr26_theory_metrics.methods.neural_collapse.config import (
    BEST_NC3,
    PAPER_GRID,
    NeuralCollapseConfig,
    parse_float_list,
)

__all__ = ["RunSpec", "SWEEP_WD_FACTORS", "expand_grid"]

#: ``grid="sweep"`` multiplies the best-NC3 weight decay by these factors.
SWEEP_WD_FACTORS: tuple[float, ...] = (1.0, 0.1)


@dataclass(frozen=True)
class RunSpec:
    """One training run: optimizer, hyperparameters and its role (``grid`` or ``ablation``)."""

    optimizer: str
    lr: float
    momentum: float
    weight_decay: float
    role: str = "grid"

    @property
    def label(self) -> str:
        """Short label, e.g. ``sgd lr=0.01 m=0.9 wd=0.05``."""
        return f"{self.optimizer} lr={self.lr:g} m={self.momentum:g} wd={self.weight_decay:g}"


def expand_grid(cfg: NeuralCollapseConfig) -> list[RunSpec]:
    """The runs of ``cfg``: per optimizer the grid's (lr × momentum × WD), the ``lrs``/``momenta``/``weight_decays``
    overrides replacing the grid's lists; then (``momentum_ablation``) SGD with momentum 0 at the first SGD
    setting, when that setting has momentum > 0."""
    override = {f: parse_float_list(f, getattr(cfg, f)) for f in ("lrs", "momenta", "weight_decays")}
    runs: list[RunSpec] = []
    for name in cfg.optimizer_list:
        lr, mom, wd = BEST_NC3[name]
        if cfg.grid == "best":
            lists = ((lr,), (mom,), (wd,))
        elif cfg.grid == "sweep":
            lists = ((lr,), (mom,), tuple(wd * f for f in SWEEP_WD_FACTORS))
        else:
            lists = PAPER_GRID[name]
        lrs = override["lrs"] or lists[0]
        moms = override["momenta"] or lists[1]
        wds = override["weight_decays"] or lists[2]
        runs += [RunSpec(name, a, b, c) for a, b, c in itertools.product(lrs, moms, wds)]
    if cfg.momentum_ablation:
        first = next((r for r in runs if r.optimizer == "sgd" and r.momentum > 0), None)
        if first is not None:
            runs.append(RunSpec("sgd", first.lr, 0.0, first.weight_decay, role="ablation"))
    return runs
