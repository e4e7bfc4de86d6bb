"""Neural modules: the tree aggregator (pure torch) and PyG-facing layers (imported lazily)."""

from iclr26_graphs.nn.tree_aggregator import TreeAggregator, naive_tree_aggregate, tree_aggregate

__all__ = ["TreeAggregator", "naive_tree_aggregate", "tree_aggregate"]
