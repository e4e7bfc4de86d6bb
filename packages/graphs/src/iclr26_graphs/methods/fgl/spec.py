"""The ``fgl`` :class:`MethodSpec` (light: imports no torch_geometric until run)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iclr26_graphs.methods.fgl.claims import claims, report
from iclr26_graphs.methods.fgl.config import PRESETS, FGLConfig
from iclr26_shared.spec import MethodSpec

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

__all__ = ["FGL_SPEC"]


def _run(cfg: FGLConfig, run: RunDir) -> dict[str, Any]:
    from iclr26_graphs.methods.fgl.train import run as train_run

    return train_run(cfg, run)


FGL_SPEC: MethodSpec[FGLConfig] = MethodSpec(
    name="fgl",
    domain="graphs",
    paper="Forest-Based Graph Learning for Semi-Supervised Node Classification (ICLR 2026, OpenReview 5asbtzIVpS)",
    config=FGLConfig,
    presets=PRESETS,
    run=_run,
    claims=claims,
    summary="FGL: homophily-guided spanning forests + linear-time tree aggregation vs GCN/APPNP/GCNII (cSBM sweep)",
    report=report,
)
