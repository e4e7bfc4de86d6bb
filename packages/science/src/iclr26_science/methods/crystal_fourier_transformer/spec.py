"""The ``crystal-fourier-transformer`` :class:`MethodSpec` (light: train/claims load when called)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec, Resources

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_science.methods.crystal_fourier_transformer",
    name="crystal-fourier-transformer",
    paper="A Single Architecture for Representing Invariance Under Any Space Group (Zhang, Ertekin, Orbanz, "
    "Adams; ICLR 2026, arXiv 2512.13989)",
    summary="Crystal Fourier Transformer: one network invariant under any of the 230 space groups; zero-shot "
    "to held-out groups vs the mean predictor, plain Fourier features and an e3nn baseline",
    resources=Resources(exclusive=True),  # train/inference speed vs e3nn are timing claims
)
