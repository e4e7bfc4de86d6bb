"""iclr26 theory-metrics: HSIC unlearning evaluation, neural-collapse NC0 with optimizers, the richness metric."""

__all__: list[str] = []
