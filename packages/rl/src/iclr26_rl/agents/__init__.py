"""Pixel-based actor-critic agents (torch only)."""

from iclr26_rl.agents.drqv2 import Actor, AuxiliaryLoss, Critic, DrQV2Agent, DrQV2Hparams, PixelEncoder

__all__ = ["Actor", "AuxiliaryLoss", "Critic", "DrQV2Agent", "DrQV2Hparams", "PixelEncoder"]
