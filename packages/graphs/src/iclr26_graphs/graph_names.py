"""Names of the node-classification graphs (a light module: the config imports it without torch)."""

from typing import Literal, get_args

OfflineGraph = Literal["csbm", "drosophila-left", "drosophila-right", "mouse-dti"]
OnlineGraph = Literal["cora", "citeseer", "pubmed", "cornell", "texas", "wisconsin", "actor"]
GraphName = Literal[OfflineGraph, OnlineGraph]

OFFLINE_GRAPHS: tuple[str, ...] = get_args(OfflineGraph)
ONLINE_GRAPHS: tuple[str, ...] = get_args(OnlineGraph)

__all__ = ["OFFLINE_GRAPHS", "ONLINE_GRAPHS", "GraphName", "OfflineGraph", "OnlineGraph"]
