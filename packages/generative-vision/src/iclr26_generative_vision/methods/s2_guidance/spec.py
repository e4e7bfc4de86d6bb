"""The ``s2-guidance`` method as the CLI and ``iclr26 reproduce`` see it."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

#: The S²-Guidance method (Chen et al., arXiv 2508.12880). Not ``exclusive``: it has no wall-time claim
#: (the S²/CFG time per step is a diagnostic, reported beside the forward-pass count and marked when the
#: run shared the CPUs), so ``iclr26 reproduce`` runs it in its pool on one thread.
SPEC = MethodSpec.from_module(
    "iclr26_generative_vision.methods.s2_guidance",
    name="s2-guidance",
    paper="S²-Guidance: Stochastic Self-Guidance for Training-Free Enhancement of Diffusion Models (arXiv 2508.12880)",
    summary="S²-Guidance as a diffusers guider: Gaussian-mixture toys (exact + MLP) and a class-conditional DiT",
    gpu_presets=("full",),
)
