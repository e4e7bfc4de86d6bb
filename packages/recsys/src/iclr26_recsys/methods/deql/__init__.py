"""DEQL (Guo et al., ICLR 2026): decoupled expected quadratic loss for linear-autoencoder recommenders."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iclr26_recsys.methods.deql.claims import claims, report
from iclr26_recsys.methods.deql.config import PRESETS, DEQLConfig
from iclr26_shared.spec import MethodSpec

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

__all__ = ["SPEC", "DEQLConfig", "PRESETS"]


def _run(cfg: DEQLConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_recsys.methods.deql.train import run as train_run  # lazy: torch/scipy work only when run

    return train_run(cfg, run)


SPEC: MethodSpec[DEQLConfig] = MethodSpec(
    name="deql",
    domain="recsys",
    paper="Generalizing Linear Autoencoder Recommenders with Decoupled Expected Quadratic Loss (arXiv 2603.07402)",
    config=DEQLConfig,
    presets=PRESETS,
    run=_run,
    claims=claims,
    summary="EASE vs EDLAE (b = 0) vs DEQL (b > 0) closed forms on MovieLens-100K, strong generalisation",
    report=report,
)
