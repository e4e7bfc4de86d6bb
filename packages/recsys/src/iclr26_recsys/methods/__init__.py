"""Paper methods of the recsys domain (each with config, train, claims)."""
