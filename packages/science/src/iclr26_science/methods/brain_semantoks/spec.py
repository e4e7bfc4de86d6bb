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
    "BOLD with subject-specific connectomes and regional dynamics; linear probe of a simulated phenotype and "
    "identification of 48 simulated subjects across scans vs mask-and-reconstruct and FC; a data-scaling curve",
)
