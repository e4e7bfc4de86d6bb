"""S²-Guidance (arXiv 2508.12880): config, experiments and claims."""
