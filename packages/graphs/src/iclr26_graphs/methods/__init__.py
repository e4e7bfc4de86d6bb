"""Paper methods of the graphs domain (one sub-package each)."""
