"""Paper methods of the theory-metrics domain."""
