"""iclr26 graphs: forest-based graph learning (FGL); out-of-distribution graph model merging.

Public API (imported lazily so that ``import iclr26_graphs`` stays light)::

    from iclr26_graphs import sample_spanning_tree, TreeAggregator, FGL
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_graphs.data import CsbmParams, load_graph
    from iclr26_graphs.errors import GraphInputError
    from iclr26_graphs.methods.fgl.model import FGL, FGLStructure
    from iclr26_graphs.methods.fgl.preprocess import build_structure
    from iclr26_graphs.nn.forest_conv import ForestConv
    from iclr26_graphs.nn.homophily import HomophilyEstimator
    from iclr26_graphs.nn.tree_aggregator import TreeAggregator, naive_tree_aggregate
    from iclr26_graphs.ops.spanning_tree import sample_spanning_forests, sample_spanning_tree

_EXPORTS: dict[str, str] = {
    "sample_spanning_tree": "iclr26_graphs.ops.spanning_tree",
    "sample_spanning_forests": "iclr26_graphs.ops.spanning_tree",
    "TreeAggregator": "iclr26_graphs.nn.tree_aggregator",
    "naive_tree_aggregate": "iclr26_graphs.nn.tree_aggregator",
    "HomophilyEstimator": "iclr26_graphs.nn.homophily",
    "ForestConv": "iclr26_graphs.nn.forest_conv",
    "FGL": "iclr26_graphs.methods.fgl.model",
    "FGLStructure": "iclr26_graphs.methods.fgl.model",
    "build_structure": "iclr26_graphs.methods.fgl.preprocess",
    "CsbmParams": "iclr26_graphs.data",
    "load_graph": "iclr26_graphs.data",
    "GraphInputError": "iclr26_graphs.errors",
}

__all__ = [
    "CsbmParams",
    "FGL",
    "FGLStructure",
    "ForestConv",
    "GraphInputError",
    "HomophilyEstimator",
    "TreeAggregator",
    "build_structure",
    "load_graph",
    "naive_tree_aggregate",
    "sample_spanning_forests",
    "sample_spanning_tree",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
