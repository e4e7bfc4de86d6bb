"""The ``dupa`` method as the CLI and ``iclr26 reproduce`` see it."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec, Resources

__all__ = ["SPEC"]

#: DUPA (Peng et al., ICLR 2026, OpenReview ALpn1nQj5R). Its encoder-sharing claim has a wall-time part,
#: so a run wants the machine to itself.
SPEC = MethodSpec.from_module(
    "iclr26_generative_vision.methods.dupa",
    name="dupa",
    paper="Dual-Path Condition Alignment for Diffusion Transformers (DUPA, ICLR 2026, OpenReview ALpn1nQj5R)",
    summary="DUPA self-alignment of two noisy paths on a small decoupled diffusion transformer (DDT), vs DDT alone",
    resources=Resources(exclusive=True),
    gpu_presets=("full",),
)
