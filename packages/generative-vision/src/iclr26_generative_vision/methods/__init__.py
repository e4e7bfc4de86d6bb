"""Paper methods of the generative-vision domain."""
