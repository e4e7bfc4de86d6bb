"""Crystal Fourier Transformer: *A Single Architecture for Representing Invariance Under Any Space Group*
(Zhang, Ertekin, Orbanz, Adams; ICLR 2026, arXiv 2512.13989). Light: the spec and config import no torch."""

__all__: list[str] = []
