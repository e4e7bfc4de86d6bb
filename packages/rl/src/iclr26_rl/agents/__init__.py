"""Pixel-based actor-critic agents (torch only)."""

from iclr26_rl.agents.drqv2 import (
    ENCODERS,
    Actor,
    AuxiliaryLoss,
    Critic,
    DrQV2Agent,
    DrQV2Hparams,
    EncoderKind,
    PixelEncoder,
)

__all__ = ["ENCODERS", "Actor", "AuxiliaryLoss", "Critic", "DrQV2Agent", "DrQV2Hparams", "EncoderKind", "PixelEncoder"]
