"""Paper methods of the rl domain."""
