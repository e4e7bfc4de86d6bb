"""The ``cryolvm`` :class:`MethodSpec` (light: train/claims load when called)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_science.methods.cryolvm",
    name="cryolvm",
    paper="CryoLVM: Self-supervised Learning from Cryo-EM Density Maps with Large Vision Models (ICLR 2026, "
    "arXiv 2602.02620, OpenReview 9xcvEF2BRi)",
    summary="CryoLVM: JEPA-pre-trained 3-D SCUNet restores simulated cryo-EM maps of real structures "
    "(MDAnalysisTests adenylate-kinase trajectory for training, other PDBs held out); FSC/CC vs the input, "
    "global B-factor and LocScale-like sharpening; pretrained vs scratch; histogram loss vs MSE",
    gpu_presets=("full",),
)
