"""iclr26 science: CryoLVM, Brain-Semantoks, space-group-invariant crystal networks, ProteinTTT."""

__all__: list[str] = []
