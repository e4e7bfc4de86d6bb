"""``neural-collapse``: NC0–NC4 under SGD, SGDW, Adam, AdamW, Signum and SignumW (Zhao, Cheng, Masarczyk, Lucchi:
"Optimizer Choice Matters for the Emergence of Neural Collapse", ICLR 2026, arXiv 2602.16642).

Public names are imported lazily (``SPEC``, ``NeuralCollapseConfig``, ``PRESETS``), so importing this package
imports no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_theory_metrics.methods.neural_collapse.config import PRESETS, NeuralCollapseConfig
    from iclr26_theory_metrics.methods.neural_collapse.spec import SPEC

__all__ = ["PRESETS", "SPEC", "NeuralCollapseConfig"]

_WHERE = {"PRESETS": f"{__name__}.config", "NeuralCollapseConfig": f"{__name__}.config", "SPEC": f"{__name__}.spec"}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
