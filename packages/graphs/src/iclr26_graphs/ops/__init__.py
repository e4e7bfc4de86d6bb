"""Graph operations in plain torch: spanning-tree/forest sampling, rooting trees, components, homophily."""

from iclr26_graphs.ops.components import connected_components
from iclr26_graphs.ops.homophily import edge_homophily
from iclr26_graphs.ops.spanning_tree import (
    SamplerStalledError,
    bridge_orientation,
    is_spanning_forest,
    sample_spanning_forests,
    sample_spanning_tree,
    undirected_edges,
)
from iclr26_graphs.ops.tree_schedule import TreeSchedule, build_tree_schedule

__all__ = [
    "SamplerStalledError",
    "TreeSchedule",
    "bridge_orientation",
    "build_tree_schedule",
    "connected_components",
    "edge_homophily",
    "is_spanning_forest",
    "sample_spanning_forests",
    "sample_spanning_tree",
    "undirected_edges",
]
