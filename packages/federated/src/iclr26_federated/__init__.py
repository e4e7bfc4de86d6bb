"""iclr26 federated: FedOpenMatch on Flower's simulation engine."""

__all__: list[str] = []
