"""Reusable layers: position encodings (NoPE, RoPE, Selective RoPE) and the host mixers."""

from iclr26_sequence_models.layers.attention import Attention, ForgettingAttention
from iclr26_sequence_models.layers.conv import ShortConvolution
from iclr26_sequence_models.layers.gdn import GatedDeltaNet
from iclr26_sequence_models.layers.gla import GatedLinearAttention
from iclr26_sequence_models.layers.norm import GatedRMSNorm, RMSNorm, l2_normalize
from iclr26_sequence_models.layers.rotary import (
    NoPE,
    RoPE,
    SelectiveRoPE,
    apply_rotary,
    build_position,
    rotary_temperature,
)

__all__ = [
    "Attention",
    "ForgettingAttention",
    "GatedDeltaNet",
    "GatedLinearAttention",
    "GatedRMSNorm",
    "NoPE",
    "RMSNorm",
    "RoPE",
    "SelectiveRoPE",
    "ShortConvolution",
    "apply_rotary",
    "build_position",
    "l2_normalize",
    "rotary_temperature",
]
