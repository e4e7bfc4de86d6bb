"""iclr26 recsys: DEQL linear autoencoders."""

__all__: list[str] = []
