"""The ``selective-rope`` :class:`MethodSpec` (light: imports no torch until a run starts)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_sequence_models.methods.selective_rope",
    name="selective-rope",
    paper="Selective Rotary Position Embedding (Movahedi, Carstensen, Afzal, Hutter, Orvieto, Cevher; ICLR 2026)",
    summary="Selective RoPE vs RoPE vs NoPE in GLA/GDN/attention/FoX: state tracking, copying, MQAR, Bible bytes.",
    gpu_presets=("full",),
)
