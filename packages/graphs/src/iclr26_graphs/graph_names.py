"""Names of the node-classification graphs (a light module: the config imports it without torch)."""

OFFLINE_GRAPHS: tuple[str, ...] = ("csbm", "drosophila-left", "drosophila-right", "mouse-dti")
ONLINE_GRAPHS: tuple[str, ...] = ("cora", "citeseer", "pubmed", "cornell", "texas", "wisconsin", "actor")

__all__ = ["OFFLINE_GRAPHS", "ONLINE_GRAPHS"]
