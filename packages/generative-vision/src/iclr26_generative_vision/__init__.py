"""iclr26 generative-vision: S²-Guidance, DUPA, ELViS, Causal Delta Embeddings."""

__all__: list[str] = []
