"""ProteinTTT: *One protein is all you need* — test-time training of protein language models (Bushuiev et al.,
ICLR 2026, arXiv 2411.02109). Light: the spec and config import no torch."""

__all__: list[str] = []
