"""Brain-Semantoks: *Learning Semantic Tokens of Brain Dynamics with a Self-Distilled Foundation Model*
(Gijsen, Schulz, Ritter; ICLR 2026, arXiv 2512.11582). Light: the spec and config import no torch."""

__all__: list[str] = []
