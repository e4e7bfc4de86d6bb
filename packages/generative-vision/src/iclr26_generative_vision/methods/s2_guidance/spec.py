"""The ``s2-guidance`` method as the CLI and ``iclr26 reproduce`` see it."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec, Resources

__all__ = ["SPEC"]

#: The S²-Guidance method (Chen et al., arXiv 2508.12880). Its cost-per-step claim is a wall-time ratio,
#: so a run wants the machine to itself.
SPEC = MethodSpec.from_module(
    "iclr26_generative_vision.methods.s2_guidance",
    name="s2-guidance",
    paper="S²-Guidance: Stochastic Self-Guidance for Training-Free Enhancement of Diffusion Models (arXiv 2508.12880)",
    summary="S²-Guidance as a diffusers guider: Gaussian-mixture toys (exact + MLP) and a class-conditional DiT",
    resources=Resources(exclusive=True),
    gpu_presets=("full",),
)
