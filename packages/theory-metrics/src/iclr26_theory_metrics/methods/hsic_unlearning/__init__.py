"""``hsic-unlearning``: unlearning evaluation by split-half statistical dependence (HSIC) of subsets (Zhang, Li, Liu,
Chen, Xu: "Unlearning Evaluation through Subset Statistical Independence", ICLR 2026, arXiv 2603.00587).

Public names are imported lazily (``SPEC``, ``HsicUnlearningConfig``, ``PRESETS``), so importing this package
imports no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS, HsicUnlearningConfig
    from iclr26_theory_metrics.methods.hsic_unlearning.spec import SPEC

__all__ = ["PRESETS", "SPEC", "HsicUnlearningConfig"]

_WHERE = {"PRESETS": f"{__name__}.config", "HsicUnlearningConfig": f"{__name__}.config", "SPEC": f"{__name__}.spec"}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
