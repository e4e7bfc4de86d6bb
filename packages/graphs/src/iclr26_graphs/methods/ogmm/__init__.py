"""OGMM: Out-of-Distribution Graph Models Merging (Wang et al., ICLR 2026).

Public names load lazily (PEP 562) so that importing the package imports no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_graphs.methods.ogmm.adapters import PyGExpert, graphs_from_data
    from iclr26_graphs.methods.ogmm.config import PRESETS, MergeConfig, OGMMConfig
    from iclr26_graphs.methods.ogmm.model import DenseExpert, GraphInverter, MergedGNN
    from iclr26_graphs.methods.ogmm.spec import SPEC
    from iclr26_graphs.methods.ogmm.train import accuracy, generate, merge, merge_experts, predict

_EXPORTS: dict[str, str] = {
    "DenseExpert": "iclr26_graphs.methods.ogmm.model",
    "GraphInverter": "iclr26_graphs.methods.ogmm.model",
    "MergedGNN": "iclr26_graphs.methods.ogmm.model",
    "MergeConfig": "iclr26_graphs.methods.ogmm.config",
    "OGMMConfig": "iclr26_graphs.methods.ogmm.config",
    "PRESETS": "iclr26_graphs.methods.ogmm.config",
    "SPEC": "iclr26_graphs.methods.ogmm.spec",
    "generate": "iclr26_graphs.methods.ogmm.train",
    "merge_experts": "iclr26_graphs.methods.ogmm.train",
    "predict": "iclr26_graphs.methods.ogmm.train",
    "accuracy": "iclr26_graphs.methods.ogmm.train",
    "PyGExpert": "iclr26_graphs.methods.ogmm.adapters",
    "graphs_from_data": "iclr26_graphs.methods.ogmm.adapters",
    "merge": "iclr26_graphs.methods.ogmm.train",
}

__all__ = [
    "PRESETS",
    "SPEC",
    "DenseExpert",
    "GraphInverter",
    "MergeConfig",
    "MergedGNN",
    "OGMMConfig",
    "PyGExpert",
    "accuracy",
    "generate",
    "graphs_from_data",
    "merge",
    "merge_experts",
    "predict",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
