"""The ``elvis`` method as the CLI and ``iclr26 reproduce`` see it."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec, Resources

__all__ = ["SPEC"]

#: ELViS (Suma, Kordopatis-Zilos, Kalantidis, Tolias; ICLR 2026, arXiv 2603.28603). Its cost claim has a
#: wall-time part (µs per pair), so a run wants the machine to itself.
SPEC = MethodSpec.from_module(
    "iclr26_generative_vision.methods.elvis",
    name="elvis",
    paper="ELViS: Efficient Visual Similarity from Local Descriptors (ICLR 2026, arXiv 2603.28603)",
    summary="ELViS similarity-space re-ranking of SIFT descriptors on an offline multi-domain retrieval benchmark",
    resources=Resources(exclusive=True),
    gpu_presets=("full",),
)
