"""Synthetic data sets of the domain: modular addition for the grokking setup (Power et al., 2022)."""

from iclr26_theory_metrics.data.modular import ModularData, modular_addition

__all__ = ["ModularData", "modular_addition"]
