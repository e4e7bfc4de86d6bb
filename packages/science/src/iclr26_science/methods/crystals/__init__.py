"""The ``crystals`` method: Crystal Fourier Transformer with a space-group-adapted encoding (issue 7)."""
