"""Paper methods of the federated domain."""
