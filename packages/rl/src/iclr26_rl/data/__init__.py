"""Replay storage for pixel RL (numpy + torch only)."""

from iclr26_rl.data.replay import Batch, EpisodeReplay

__all__ = ["Batch", "EpisodeReplay"]
