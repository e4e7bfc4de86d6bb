"""The ``crystals`` :class:`MethodSpec` (light: the training module is imported when the run starts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iclr26_science.methods.crystals.claims import crystals_claims, crystals_report
from iclr26_science.methods.crystals.config import PRESETS, CrystalsConfig
from iclr26_shared.config import config_to_dict
from iclr26_shared.spec import MethodSpec

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

__all__ = ["SPEC"]


def _run(cfg: CrystalsConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_science.methods.crystals.train import run as train_run

    results = train_run(cfg, run)
    fields = ("zero_shot_ratio", "accuracy_ratio", "holdout_groups")
    return {**results, "config": {k: v for k, v in config_to_dict(cfg).items() if k in fields}}


SPEC: MethodSpec[CrystalsConfig] = MethodSpec(
    name="crystals",
    domain="science",
    paper="A Single Architecture for Representing Invariance Under Any Space Group (Zhang, Ertekin, Orbanz, "
    "Adams; ICLR 2026, arXiv 2512.13989)",
    config=CrystalsConfig,
    presets=PRESETS,
    run=_run,
    claims=crystals_claims,
    summary="Crystal Fourier Transformer: one network invariant under any of the 230 space groups; zero-shot "
    "to held-out groups vs plain Fourier features and an e3nn baseline",
    report=crystals_report,
)
