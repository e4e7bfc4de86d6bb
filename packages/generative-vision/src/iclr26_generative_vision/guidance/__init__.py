"""S²-Guidance, block masks, the guided sampling loop and guider factory (modules import diffusers)."""
