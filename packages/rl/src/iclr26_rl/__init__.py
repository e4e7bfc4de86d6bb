"""iclr26 rl: Ego-Foresight."""

__all__: list[str] = []
