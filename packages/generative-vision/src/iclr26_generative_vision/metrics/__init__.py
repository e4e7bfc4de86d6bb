"""Distribution distances (Wasserstein, Fréchet) and the in-repo feature classifier."""
