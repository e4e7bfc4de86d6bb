"""Image retrieval: ELViS similarity-space re-ranking, its baselines and retrieval metrics."""
