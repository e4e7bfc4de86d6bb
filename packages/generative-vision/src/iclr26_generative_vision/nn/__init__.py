"""Denoisers and the evaluation classifier (import their modules; this package imports nothing heavy)."""
