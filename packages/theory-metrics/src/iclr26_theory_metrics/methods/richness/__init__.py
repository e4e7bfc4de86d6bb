"""``richness``: the low-rank dynamical-richness metric D_LR across grokking and for lazy vs rich training (Nam et
al.: "Decoupling Dynamical Richness from Representation Learning: Towards Practical Measurement", ICLR 2026,
arXiv 2410.04264).

Public names are imported lazily (``SPEC``, ``RichnessConfig``, ``PRESETS``), so importing this package imports
no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_theory_metrics.methods.richness.config import PRESETS, RichnessConfig
    from iclr26_theory_metrics.methods.richness.spec import SPEC

__all__ = ["PRESETS", "SPEC", "RichnessConfig"]

_WHERE = {"PRESETS": f"{__name__}.config", "RichnessConfig": f"{__name__}.config", "SPEC": f"{__name__}.spec"}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
