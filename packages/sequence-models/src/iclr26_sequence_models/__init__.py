"""iclr26 sequence-models: Selective RoPE; RESTRAIN and Semantic Voting."""

__all__: list[str] = []
