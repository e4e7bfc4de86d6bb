"""iclr26 graphs: forest-based graph learning (FGL); out-of-distribution graph model merging."""

__all__: list[str] = []
