"""Flow matching (one time convention for the package), the Euler sampler with a CFG interval and
encoder sharing, and the DUPA dual-path alignment loss."""
