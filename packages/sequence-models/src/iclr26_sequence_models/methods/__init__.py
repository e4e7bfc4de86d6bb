"""Paper methods of the sequence-models domain."""
