"""Node-classification graphs: the cSBM generator, offline connectomes and opt-in PyG sets."""

from iclr26_graphs.data.csbm import CsbmParams, csbm_expected_homophily, sample_csbm
from iclr26_graphs.data.registry import (
    OFFLINE_GRAPHS,
    ONLINE_GRAPHS,
    GraphTensors,
    graph_tensors,
    load_graph,
    make_split,
    validate_graph,
)

__all__ = [
    "OFFLINE_GRAPHS",
    "ONLINE_GRAPHS",
    "CsbmParams",
    "GraphTensors",
    "csbm_expected_homophily",
    "graph_tensors",
    "load_graph",
    "make_split",
    "sample_csbm",
    "validate_graph",
]
