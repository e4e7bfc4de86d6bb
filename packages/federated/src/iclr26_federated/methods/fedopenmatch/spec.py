"""The FedOpenMatch :class:`MethodSpec` (light: no torch or flwr import until ``run`` is called)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iclr26_federated.methods.fedopenmatch.claims import claims, report
from iclr26_federated.methods.fedopenmatch.config import PRESETS, FedOpenMatchConfig
from iclr26_shared.spec import MethodSpec

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

__all__ = ["SPEC"]


def _run(cfg: FedOpenMatchConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_federated.methods.fedopenmatch.train import run as train_run

    return train_run(cfg, run)


SPEC: MethodSpec[FedOpenMatchConfig] = MethodSpec(
    name="fedopenmatch",
    domain="federated",
    paper="FedOpenMatch: open-set semi-supervised FL in the label-at-server setting (ICLR 2026 submission)",
    config=FedOpenMatchConfig,
    presets=PRESETS,
    run=_run,
    claims=claims,
    summary="FedOpenMatch vs FedAvg+OpenMatch/FixMatch, labeled-only and GS/LA/LCR ablations, as a Flower app",
    report=report,
)
